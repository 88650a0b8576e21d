/* Helpers shared by the cmocka tests that call the library: PETSc errors captured instead of printed
   (push CaptureError with PetscPushErrorHandler()), and files of the source tree. */
#ifndef MBS_TEST_H
#define MBS_TEST_H

#include <stdio.h>
#include <stdlib.h>
#include <petscsys.h>

/* The first error raised since the last ClearError(). */
static char           error_message[8192];
static PetscErrorCode error_code;

static inline PetscErrorCode CaptureError(MPI_Comm comm, int line, const char *func, const char *file,
                                          PetscErrorCode code, PetscErrorType type, const char *message, void *ctx)
{
  (void)comm, (void)line, (void)func, (void)file, (void)ctx;
  if (type == PETSC_ERROR_INITIAL && !error_code) {
    error_code = code;
    snprintf(error_message, sizeof(error_message), "%s", message ? message : "");
  }
  return code;
}

static inline void ClearError(void)
{
  error_code       = 0;
  error_message[0] = 0;
}

/* <source tree>/relative, the source tree given by GGLMBS_SOURCE_DIR (ctest sets it). */
static inline void InputPath(char path[], size_t size, const char relative[])
{
  const char *dir = getenv("GGLMBS_SOURCE_DIR");

  if (!dir) fail_msg("GGLMBS_SOURCE_DIR is not set (ctest sets it to the source tree)");
  if (snprintf(path, size, "%s/%s", dir, relative) >= (int)size) fail_msg("input path too long: %s/%s", dir, relative);
}

#endif
