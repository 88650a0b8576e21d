/*
  Shared by the libFuzzer targets (tests/fuzz/, scripts/fuzz.sh): PETSc initialised once, errors
  captured quietly, each input written to a file so that the targets go through the real readers
  (rank 0 reads the file and broadcasts it, src/io/readfile.c), and the oracle on error messages.
*/
#ifndef MBS_FUZZ_COMMON_H
#define MBS_FUZZ_COMMON_H

#define _POSIX_C_SOURCE 200809L /* mkdtemp, symlink */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sanitizer/lsan_interface.h>

#include <petscsys.h>

/* The first error raised since the input started, captured instead of printed. */
static char           fuzz_error_message[4096];
static PetscErrorCode fuzz_error_code;

static inline PetscErrorCode FuzzCaptureError(MPI_Comm comm, int line, const char *func, const char *file,
                                              PetscErrorCode code, PetscErrorType type, const char *message, void *ctx)
{
  (void)comm, (void)line, (void)func, (void)file, (void)ctx;
  if (type == PETSC_ERROR_INITIAL && !fuzz_error_code) {
    fuzz_error_code = code;
    snprintf(fuzz_error_message, sizeof(fuzz_error_message), "%s", message ? message : "");
  }
  return code;
}

static inline void FuzzClearError(void)
{
  fuzz_error_code       = 0;
  fuzz_error_message[0] = 0;
}

/* A finding: print what happened and abort, so that libFuzzer keeps the input as a crash. */
static inline void FuzzFail(const char what[], PetscErrorCode ierr)
{
  fprintf(stderr, "\nFUZZ FINDING: %s (error %d, first raised %d): %s\n", what, (int)ierr, (int)fuzz_error_code,
          fuzz_error_message);
  abort();
}

/* PETSc sees no command line (libFuzzer's flags are not PETSc options) and stays quiet. What MPI and its
   plug-ins allocate at start-up and never free (some of it in modules that are unloaded again) is not
   counted as a leak. */
static inline void FuzzInitializePetsc(const char *const options[])
{
  int  argc   = 1;
  char name[] = "fuzz", *args[] = {name, NULL}, **argv = args;

  /* the sanitizers and libFuzzer handle the signals and save the input: neither Open MPI nor PETSc may
     catch SIGABRT or SIGSEGV first */
  if (setenv("OMPI_MCA_opal_signal", "", 1) || setenv("PETSC_OPTIONS", "-no_signal_handler", 1)) abort();
  __lsan_disable();
  if (PetscInitialize(&argc, &argv, NULL, NULL)) abort();
  __lsan_enable();
  for (int i = 0; options && options[i]; i += 2)
    if (PetscOptionsSetValue(NULL, options[i], options[i + 1])) abort();
  if (PetscPushErrorHandler(FuzzCaptureError, NULL)) abort();
}

/* Writes one input to 'path' (a file on a RAM disk when there is one). */
static inline void FuzzWriteFile(const char path[], const uint8_t *data, size_t size)
{
  FILE *fp = fopen(path, "wb");

  if (!fp) FuzzFail("cannot write the input file", 0);
  if (size && fwrite(data, 1, size, fp) != size) FuzzFail("cannot write the input file", 0);
  if (fclose(fp)) FuzzFail("cannot write the input file", 0);
}

/* A fresh scratch directory, removed by the caller's atexit handler. */
static inline void FuzzMakeDir(char dir[], size_t size)
{
  const char *base = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : (getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");

  snprintf(dir, size, "%s/gglmbs-fuzz-XXXXXX", base);
  if (!mkdtemp(dir)) FuzzFail("cannot create a scratch directory", 0);
}

/* The message of a located input error starts with "<file>:<line>:<column>: " or, for a mesh file
   named by no YAML file, "<file>:<line>: ". */
static inline int FuzzIsLocated(const char message[], const char file[], int columns)
{
  size_t      n      = strlen(file);
  const char *s      = message + n;
  int         fields = 0;

  if (strncmp(message, file, n)) return 0;
  while (fields < (columns ? 2 : 1)) {
    if (*s++ != ':' || *s < '0' || *s > '9') return 0;
    while (*s >= '0' && *s <= '9') s++;
    fields++;
  }
  return s[0] == ':' && s[1] == ' ';
}

#endif
