/* Step-indexed CSV files written by rank 0 (src/outputs/csvfile.h): diagnostics.csv, the reactions */
#define _POSIX_C_SOURCE 200809L /* fileno, ftruncate, lseek */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "outputs/csvfile.h"

struct _n_MbsCSVFile {
  MPI_Comm comm;
  FILE    *fp; /* rank 0 only */
  char     path[PETSC_MAX_PATH_LEN];
  PetscInt last_kept; /* last step of the rows kept from an earlier run, -1 if none */
  char    *header;    /* the column names, ended by a newline */
};

/* The provenance as comment lines "# ...", before the header; returns an errno */
static int MbsCSVPutComments(FILE *fp, const char text[])
{
  for (const char *line = text; *line;) {
    const char *end = strchr(line, '\n');
    const int   len = end ? (int)(end - line) : (int)strlen(line);
    if (fprintf(fp, "# %.*s\n", len, line) < 0) return errno ? errno : EIO;
    line += len + (end ? 1 : 0);
  }
  return 0;
}

/* Rank 0: a new file with the provenance and the header; returns an errno */
static int MbsCSVCreate(const char path[], const char header[], const char provenance[], FILE **fp)
{
  int err;

  *fp = fopen(path, "w");
  if (!*fp) return errno;
  err = MbsCSVPutComments(*fp, provenance);
  if (!err && (fputs(header, *fp) < 0 || fflush(*fp))) err = errno ? errno : EIO;
  return err;
}

/* Rank 0: rewrites path keeping its comments (the provenance of the runs before), this run's provenance after
   them, the header and the rows of steps <= keep_upto (under a temporary name, then renamed), and reopens it for
   appending. A missing file starts afresh. Returns an errno. */
static int MbsCSVReopen(const char path[], const char header[], PetscInt keep_upto, const char provenance[], FILE **fp,
                        PetscInt *last_kept)
{
  char  tmp[PETSC_MAX_PATH_LEN + 8], line[4096];
  FILE *in, *out;
  int   err = 0, has_header = 0;

  *last_kept = -1;
  in         = fopen(path, "r");
  if (!in) {
    if (errno != ENOENT) return errno;
    return MbsCSVCreate(path, header, provenance, fp);
  }
  snprintf(tmp, sizeof(tmp), "%s.tmp", path);
  out = fopen(tmp, "w");
  if (!out) {
    err = errno;
    fclose(in);
    return err;
  }
  for (int start = 1; !err && fgets(line, sizeof(line), in);) { /* the comments, up to the old header */
    if (start && line[0] != '#') {
      has_header = 1;
      break;
    }
    if (fputs(line, out) < 0) err = errno ? errno : EIO;
    start = strchr(line, '\n') != NULL; /* a comment longer than line[] comes in several pieces */
  }
  if (!err && fprintf(out, "# continued from step %" PetscInt_FMT " by:\n", keep_upto) < 0) err = errno ? errno : EIO;
  if (!err) err = MbsCSVPutComments(out, provenance);
  if (!err && fputs(header, out) < 0) err = errno ? errno : EIO;
  if (has_header) {
    while (!err && fgets(line, sizeof(line), in)) {
      long long    step;
      const size_t n = strlen(line);
      if (!n || line[n - 1] != '\n') break; /* a row cut short (the run was killed as it wrote it) */
      if (sscanf(line, "%lld,", &step) != 1 || step > keep_upto) break;
      if (fputs(line, out) < 0) err = errno ? errno : EIO;
      *last_kept = (PetscInt)step;
    }
  }
  fclose(in);
  if (fclose(out) && !err) err = errno ? errno : EIO;
  if (!err && rename(tmp, path)) err = errno;
  if (err) {
    remove(tmp);
    return err;
  }
  *fp = fopen(path, "a");
  return *fp ? 0 : errno;
}

PetscErrorCode MbsCSVFileOpen(MPI_Comm comm, const char directory[], const char name[], const char header[],
                              PetscInt keep_upto, const char provenance[], MbsCSVFile *file)
{
  MbsCSVFile  f;
  PetscMPIInt rank;
  int         err = 0;

  PetscFunctionBegin;
  PetscCall(MbsMakeDirectory(comm, directory));
  PetscCall(PetscNew(&f));
  f->comm = comm;
  PetscCall(PetscSNPrintf(f->path, sizeof(f->path), "%s/%s", directory, name));
  PetscCall(PetscStrallocpy(header, &f->header));
  PetscCallMPI(MPI_Comm_rank(comm, &rank));
  f->last_kept = -1;
  if (rank == 0) {
    if (keep_upto >= 0)
      err = MbsCSVReopen(f->path, f->header, keep_upto, provenance, &f->fp, &f->last_kept);
    else
      err = MbsCSVCreate(f->path, f->header, provenance, &f->fp);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, comm));
  PetscCallMPI(MPI_Bcast(&f->last_kept, 1, MPIU_INT, 0, comm));
  if (err) {
    if (f->fp) fclose(f->fp);
    PetscCall(PetscFree(f->header));
    PetscCall(PetscFree(f));
    SETERRQ(comm, PETSC_ERR_FILE_OPEN, "Cannot write '%s/%s': %s", directory, name, strerror(err));
  }
  *file = f;
  PetscFunctionReturn(0);
}

/* A row is written whole or not at all: it goes out in one write() past the stdio buffer (empty after
   the header), and a write that fails (disk full, I/O error) is cut back to the end of the last whole
   row, so the file stays a valid CSV that a restart can continue. */
PetscErrorCode MbsCSVFileWriteRow(MbsCSVFile f, PetscInt step, const char row[])
{
  int err = 0;

  PetscFunctionBegin;
  if (f->fp) {
    const int    fd  = fileno(f->fp);
    const size_t len = strlen(row);
    const off_t  end = lseek(fd, 0, SEEK_END);

    for (size_t done = 0; !err && done < len;) {
      const ssize_t n = write(fd, row + done, len - done);
      if (n > 0)
        done += (size_t)n;
      else if (n < 0 && errno == EINTR)
        continue;
      else
        err = n < 0 ? errno : ENOSPC;
    }
    if (err && end >= 0 && !ftruncate(fd, end)) (void)lseek(fd, end, SEEK_SET);
  }
  PetscCallMPI(MPI_Bcast(&err, 1, MPI_INT, 0, f->comm));
  PetscCheck(!err, f->comm, PETSC_ERR_FILE_WRITE, "Writing '%s' failed at step %" PetscInt_FMT ": %s", f->path, step,
             strerror(err));
  PetscFunctionReturn(0);
}

PetscBool MbsCSVFileHasStep(MbsCSVFile f, PetscInt step)
{
  return (PetscBool)(f->last_kept == step);
}

PetscErrorCode MbsCSVFileClose(MbsCSVFile *file)
{
  PetscFunctionBegin;
  if (!*file) PetscFunctionReturn(0);
  if ((*file)->fp) fclose((*file)->fp);
  PetscCall(PetscFree((*file)->header));
  PetscCall(PetscFree(*file));
  PetscFunctionReturn(0);
}
