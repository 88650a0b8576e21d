/*
  The command-line program end to end: runs $GGLMBS_BINARY as a child process (no PETSc in this test)
  on bad inputs, on the spherical pendulum and with options that override the input file, and checks its
  exit status, messages and output files. Input files are found through GGLMBS_SOURCE_DIR; outputs go
  to a fresh temporary directory, removed when every test passes and kept (and named) otherwise.
  Silent when it passes.
*/
#define _XOPEN_SOURCE 700 /* mkdtemp, nftw, setenv */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <math.h>
#include <setjmp.h>
#include <signal.h>
#include <spawn.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <cmocka.h>

extern char **environ;

#define PATH_SIZE 4096
#define MAX_ARGS  32

static char scratch[PATH_SIZE]; /* the temporary directory of this run */

/* ---------------------------------------------------------------- files and paths */

/* The whole file as a NUL-terminated string (free it), or NULL if it cannot be read. */
static char *ReadFile(const char *path)
{
  FILE  *fp = fopen(path, "rb");
  char  *text;
  size_t len = 0, cap = 4096, got;

  if (!fp) return NULL;
  text = malloc(cap);
  while (text && (got = fread(text + len, 1, cap - len - 1, fp)) > 0) {
    len += got;
    if (cap - len - 1 == 0) {
      char *bigger = realloc(text, 2 * cap);
      if (!bigger) free(text);
      text = bigger;
      cap *= 2;
    }
  }
  if (text) text[len] = 0;
  fclose(fp);
  if (!text) fail_msg("out of memory reading %s", path);
  return text;
}

static int FileExists(const char *path)
{
  struct stat sb;

  return stat(path, &sb) == 0;
}

static void JoinPath(char path[], const char *dir, const char *name)
{
  if (snprintf(path, PATH_SIZE, "%s/%s", dir, name) >= PATH_SIZE) fail_msg("path too long: %s/%s", dir, name);
}

/* A file of the source tree. */
static void SourcePath(char path[], const char *relative)
{
  const char *dir = getenv("GGLMBS_SOURCE_DIR");

  if (!dir) fail_msg("GGLMBS_SOURCE_DIR is not set (ctest sets it to the source tree)");
  JoinPath(path, dir, relative);
}

/* A new, empty directory for one test case: <scratch>/<name>. */
static void CaseDirectory(char dir[], const char *name)
{
  JoinPath(dir, scratch, name);
  if (mkdir(dir, 0777)) fail_msg("cannot create %s", dir);
}

static int RemoveEntry(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
  (void)sb, (void)flag, (void)ftw;
  return remove(path);
}

/* ---------------------------------------------------------------- running the program */

typedef struct {
  int   exited; /* the program exited normally (was not killed by a signal) */
  int   status; /* its exit status */
  char *out, *err;
} ProgramRun;

static void FreeRun(ProgramRun *run)
{
  free(run->out);
  free(run->err);
}

/* Starts $GGLMBS_BINARY (on np ranks through $GGLMBS_MPIEXEC when np > 1) with the arguments, stdin from
   /dev/null, stdout and stderr captured to <dir>/stdout.txt and <dir>/stderr.txt. With a disk (a
   directory), the program runs in a mount namespace of its own (unshare -m) with a tmpfs of disk_kib KiB
   mounted on that directory: a small disk that fills up; its files are copied to <disk>.saved when the
   program ends (exit status 98: no mount namespace, 99: the tmpfs could not be mounted, both needing
   root). Returns the child's pid. */
static pid_t SpawnProgramV(const char *dir, int np, const char *disk, long disk_kib, va_list ap)
{
  const char *binary = getenv("GGLMBS_BINARY"), *mpiexec = getenv("GGLMBS_MPIEXEC");
  char       *argv[MAX_ARGS + 16], out[PATH_SIZE], err[PATH_SIZE], nps[16], script[256], saved[PATH_SIZE];
  posix_spawn_file_actions_t actions;
  pid_t                      pid;
  int                        argc = 0, rc;

  if (!binary) fail_msg("GGLMBS_BINARY is not set (ctest sets it to the gglmbs executable)");
  if (disk) {
    snprintf(script, sizeof(script),
             "d=$1; s=$2; shift 2; mount -t tmpfs -o size=%ldk tmpfs \"$d\" || exit 99; \"$@\"; rc=$?; cp -R \"$d\"/. "
             "\"$s\"/; exit $rc",
             disk_kib);
    if (snprintf(saved, sizeof(saved), "%s.saved", disk) >= (int)sizeof(saved)) fail_msg("path too long: %s", disk);
    if (mkdir(disk, 0777) || mkdir(saved, 0777)) fail_msg("cannot create %s and %s", disk, saved);
    argv[argc++] = "/bin/sh"; /* exit status 98: no mount namespace (not root) */
    argv[argc++] = "-c";
    argv[argc++] = "unshare -m true 2>/dev/null || exit 98; exec unshare -m \"$@\"";
    argv[argc++] = "sh";
    argv[argc++] = "/bin/sh";
    argv[argc++] = "-c";
    argv[argc++] = script;
    argv[argc++] = "sh";
    argv[argc++] = (char *)disk;
    argv[argc++] = saved;
  }
  if (np > 1) {
    if (!mpiexec) fail_msg("GGLMBS_MPIEXEC is not set (ctest sets it to mpiexec)");
    snprintf(nps, sizeof(nps), "%d", np);
    argv[argc++] = (char *)mpiexec;
    argv[argc++] = "--oversubscribe";
    argv[argc++] = "-n";
    argv[argc++] = nps;
  }
  argv[argc++] = (char *)binary;
  for (const char *arg; (arg = va_arg(ap, const char *));) {
    if (argc > MAX_ARGS + 14) fail_msg("too many arguments");
    argv[argc++] = (char *)arg;
  }
  argv[argc] = NULL;
  JoinPath(out, dir, "stdout.txt");
  JoinPath(err, dir, "stderr.txt");
  if (posix_spawn_file_actions_init(&actions) ||
      posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0) ||
      posix_spawn_file_actions_addopen(&actions, 1, out, O_WRONLY | O_CREAT | O_TRUNC, 0644) ||
      posix_spawn_file_actions_addopen(&actions, 2, err, O_WRONLY | O_CREAT | O_TRUNC, 0644))
    fail_msg("posix_spawn_file_actions failed");
  rc = posix_spawn(&pid, argv[0], &actions, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (rc) fail_msg("cannot run %s: %s", argv[0], strerror(rc));
  return pid;
}

/* Waits for the program started in dir and collects its status and output. */
static ProgramRun WaitProgram(const char *dir, pid_t pid)
{
  char       out[PATH_SIZE], err[PATH_SIZE];
  ProgramRun run = {0, -1, NULL, NULL};
  int        wstatus, rc;

  while ((rc = waitpid(pid, &wstatus, 0)) < 0 && errno == EINTR) continue;
  if (rc < 0) fail_msg("waitpid: %s", strerror(errno));
  JoinPath(out, dir, "stdout.txt");
  JoinPath(err, dir, "stderr.txt");
  run.exited = WIFEXITED(wstatus);
  run.status = run.exited ? WEXITSTATUS(wstatus) : -WTERMSIG(wstatus);
  run.out    = ReadFile(out);
  run.err    = ReadFile(err);
  if (!run.out || !run.err) fail_msg("cannot read the captured output in %s", dir);
  return run;
}

static ProgramRun RunProgramV(const char *dir, int np, va_list ap)
{
  return WaitProgram(dir, SpawnProgramV(dir, np, NULL, 0, ap));
}

/* Runs the program on one rank with the NULL-terminated arguments. */
static ProgramRun RunProgram(const char *dir, ...)
{
  ProgramRun run;
  va_list    ap;

  va_start(ap, dir);
  run = RunProgramV(dir, 1, ap);
  va_end(ap);
  return run;
}

/* Runs the program on np ranks with the NULL-terminated arguments. */
static ProgramRun RunParallel(const char *dir, int np, ...)
{
  ProgramRun run;
  va_list    ap;

  va_start(ap, np);
  run = RunProgramV(dir, np, ap);
  va_end(ap);
  return run;
}

/* ---------------------------------------------------------------- text */

static void ExpectContains(const char *what, const char *text, const char *part)
{
  if (!strstr(text, part)) fail_msg("%s\n  %s\nlacks\n  %s", what, text, part);
}

static void ExpectLacks(const char *what, const char *text, const char *part)
{
  if (strstr(text, part)) fail_msg("%s\n  %s\ncontains\n  %s", what, text, part);
}

static int IsWordChar(char c)
{
  return isalnum((unsigned char)c) || c == '_' || c == '-';
}

/* The phrase occurs as whole words ("10 steps" is not in "110 steps", "scheme em" not in "scheme em-g"). */
static int HasPhrase(const char *text, const char *phrase)
{
  const size_t n = strlen(phrase);

  for (const char *s = strstr(text, phrase); s; s = strstr(s + 1, phrase))
    if ((s == text || !IsWordChar(s[-1])) && !IsWordChar(s[n])) return 1;
  return 0;
}

/* The number of lines starting with prefix; the first of them is copied to line[size]. */
static int LinesStarting(const char *text, const char *prefix, char line[], size_t size)
{
  int count = 0;

  line[0] = 0;
  for (const char *s = text; *s;) {
    const char  *end = strchr(s, '\n');
    const size_t len = end ? (size_t)(end - s) : strlen(s);

    if (!strncmp(s, prefix, strlen(prefix)) && !count++) snprintf(line, size, "%.*s", (int)len, s);
    s += len + (end != NULL);
  }
  return count;
}

/* Some line, stripped of surrounding blanks, is exactly word. */
static int HasLine(const char *text, const char *word)
{
  const size_t n = strlen(word);

  for (const char *s = text; *s;) {
    const char *end = strchr(s, '\n'), *e = end ? end : s + strlen(s);

    while (s < e && isspace((unsigned char)*s)) s++;
    while (e > s && isspace((unsigned char)e[-1])) e--;
    if ((size_t)(e - s) == n && !strncmp(s, word, n)) return 1;
    if (!end) break;
    s = end + 1;
  }
  return 0;
}

/* A run that failed the way a user error should: a normal exit with non-zero status and exactly one
   "gglmbs: error:" line on stderr, no PETSc traceback. */
static void ExpectUserError(const char *name, const ProgramRun *run)
{
  char line[PATH_SIZE];

  if (!run->exited) fail_msg("%s: gglmbs was killed by signal %d; stderr:\n%s", name, -run->status, run->err);
  if (run->status == 0) fail_msg("%s: gglmbs exited with status 0; stderr:\n%s", name, run->err);
  ExpectLacks("stderr", run->err, "PETSC ERROR");
  if (LinesStarting(run->err, "gglmbs: error: ", line, sizeof(line)) != 1)
    fail_msg("%s: expected one line 'gglmbs: error: ...' on stderr, got\n%s", name, run->err);
}

/* ---------------------------------------------------------------- CSV */

#define CSV_MAX_ROWS 64
#define CSV_MAX_COLS 24

typedef struct {
  char   comments[4096]; /* the comment lines "# ..." before the header (the provenance), as in the file */
  char   header[256];
  int    nrows, ncols;
  double v[CSV_MAX_ROWS][CSV_MAX_COLS];
} Csv;

/* The text after the comment lines ("# ...") at the start of a file */
static const char *AfterComments(const char *text)
{
  const char *eol;
  while (*text == '#' && (eol = strchr(text, '\n'))) text = eol + 1;
  return text;
}

/* Reads a CSV file of comment lines ("# ..."), a header line and rows of numbers; every row must be complete
   (newline-terminated) and have as many fields as the header. An empty field reads as NaN. */
static void ReadCsv(const char *path, Csv *csv)
{
  char       *text = ReadFile(path), *s, *end;
  const char *eol;

  if (!text) fail_msg("cannot read %s", path);
  s = (char *)AfterComments(text);
  if ((size_t)(s - text) >= sizeof(csv->comments))
    fail_msg("%s: comments longer than %zu bytes", path, sizeof(csv->comments));
  snprintf(csv->comments, sizeof(csv->comments), "%.*s", (int)(s - text), text);
  eol = strchr(s, '\n');
  if (!eol || (size_t)(eol - s) >= sizeof(csv->header)) fail_msg("%s: no header line", path);
  snprintf(csv->header, sizeof(csv->header), "%.*s", (int)(eol - s), s);
  csv->ncols = 1;
  for (const char *c = csv->header; *c; c++) csv->ncols += *c == ',';
  if (csv->ncols > CSV_MAX_COLS) fail_msg("%s: %d columns, at most %d supported", path, csv->ncols, CSV_MAX_COLS);
  csv->nrows = 0;
  for (s = (char *)eol + 1; *s; csv->nrows++) {
    if (csv->nrows == CSV_MAX_ROWS) fail_msg("%s: more than %d rows", path, CSV_MAX_ROWS);
    for (int j = 0; j < csv->ncols; j++) {
      if (*s == ',' || *s == '\n') { /* empty field (strtod would skip a newline) */
        csv->v[csv->nrows][j] = NAN;
        end                   = s;
        if (*end != (j + 1 < csv->ncols ? ',' : '\n'))
          fail_msg("%s: row %d, field %d is empty and not followed by %s", path, csv->nrows + 1, j + 1,
                   j + 1 < csv->ncols ? "','" : "a newline");
      } else if (csv->v[csv->nrows][j] = strtod(s, &end), end == s || *end != (j + 1 < csv->ncols ? ',' : '\n'))
        fail_msg("%s: row %d, field %d is not a number followed by %s:\n%s", path, csv->nrows + 1, j + 1,
                 j + 1 < csv->ncols ? "','" : "a newline", s);
      s = end + 1;
    }
  }
  free(text);
}

/* ---------------------------------------------------------------- 1. bad inputs */

typedef struct {
  const char *file; /* relative to the source tree */
  int         line, column;
  const char *what;   /* after "file:line:column: ", the message contains this (key path or element label) */
  const char *also;   /* ... and this */
  const char *absent; /* ... and not this, or NULL */
} BadRun;

static const BadRun bad_runs[] = {
  {"tests/inputs/bad/unknown_key.yaml", 6, 5, "key 'bodies[0].colour'", "unknown key 'colour'", NULL},
  {"tests/inputs/bad/beam_stiffness.yaml", 10, 40, "key 'springs[0].EA'", "expected a positive number", NULL},
  {"tests/inputs/bad/beam_ground.yaml", 11, 31, "key 'springs[1].bodies[1]'", "weld a body to the ground", NULL},
  {"tests/inputs/bad/beam_points.yaml", 11, 5, "springs[1] (beam)", "it takes no points", NULL},
  {"tests/inputs/bad/knife_edge_velocity.yaml", 9, 5, "joints[1] (knife_edge)",
   "violates this knife_edge velocity constraint: max |A(q0) v0| = 1.000e+00", NULL},
  {"tests/inputs/bad/knife_edge_scheme.yaml", 9, 5, "joints[1] (knife_edge)",
   "needs a scheme that treats them, em, dla or dh; scheme vi-a does not", NULL},
  {"tests/inputs/bad/knife_edge_axle.yaml", 8, 5, "joints[2] (knife_edge)",
   "this velocity constraint is implied by the other constraints of body 'cart'", NULL},
  {"tests/inputs/bad/knife_edge_normal.yaml", 7, 5, "joints[1] (knife_edge)",
   "this velocity constraint is implied by the other constraints of body 'skate'", NULL},
  {"tests/inputs/bad/knife_edge_particle.yaml", 6, 30, "key 'joints[0].body'", "expected a rigid body", NULL},
  {"tests/inputs/bad/rolling_radius.yaml", 6, 41, "key 'joints[0].radius'", "expected a positive number", NULL},
  {"tests/inputs/bad/beams_coincident.yaml", 4, 36, "key 'beams[0].points[2]'", "a point other than the one before it",
   NULL},
  {"tests/inputs/bad/beams_inertia.yaml", 14, 12, "key 'beams[0].rhoI2'", "expected a positive number", NULL},
  {"tests/inputs/bad/beams_d1.yaml", 15, 9, "key 'beams[0].d1'", "an axis across the beam's first segment", NULL},
  {"tests/inputs/bad/beams_section.yaml", 7, 8, "key 'beams[0].E'", "not both", NULL},
  {"tests/inputs/bad/beams_support.yaml", 12, 25, "key 'beams[0].supports[1]'", "free, pinned or clamped", NULL},
  {"tests/inputs/bad/beams_elements.yaml", 5, 15, "key 'beams[0].elements'", "at least 2 elements", NULL},
  {"tests/inputs/bad/beams_node.yaml", 13, 31, "key 'joints[0].body'", "has the members 0..4", NULL},
  {"tests/inputs/bad/beams_mesh_quads.yaml", 4, 11, "key 'meshes[0].file'",
   "net12x16.msh:488: expected only line elements (type 1) for beams", NULL},
  {"tests/inputs/bad/beams_mesh_mass.yaml", 5, 19, "key 'meshes[0].line_density'", "no mass keys for beams", NULL},
  {"tests/inputs/bad/beams_mesh_pinned.yaml", 6, 13, "key 'meshes[0].pinned'", "no 'pinned' for a mesh of rods", NULL},
  {"tests/inputs/bad/beams_mesh_both.yaml", 7, 13, "key 'meshes[0].pinned'", "got node 1 in both", NULL},
  {"tests/inputs/bad/beams_mesh_load.yaml", 6, 11, "key 'meshes[0].load'", "no 'load' for a mesh of rods", NULL},
  {"tests/inputs/bad/galerkin_points.yaml", 2, 38, "key 'scheme.points'", "expected an integer in [2, 8]", NULL},
  {"tests/inputs/bad/galerkin_variant.yaml", 2, 16, "key 'scheme.type'", "galerkin-lgg", NULL},
  {"tests/inputs/bad/negative_mass.yaml", 3, 39, "key 'bodies[0].mass'", "got '-1'", NULL},
  {"tests/inputs/bad/unknown_body.yaml", 5, 34, "key 'joints[0].bodies[1]'", "'bobb'", NULL},
  {"tests/inputs/bad/syntax_error.yaml", 5, 4, "invalid YAML", "did not find expected '-' indicator", NULL},
  {"tests/inputs/bad/rod_violated.yaml", 7, 5, "joints[1] (rod)", "position", "velocity"},
  {"tests/inputs/app/rod_velocity.yaml", 7, 5, "joints[0] (rod)", "velocity", "position"},
  {"tests/inputs/bad/universal_parallel.yaml", 7, 5, "joints[0] (universal)", "position", "velocity"},
  {"tests/inputs/bad/prismatic_misaligned.yaml", 7, 5, "joints[0] (prismatic)", "position", "velocity"},
  {"tests/inputs/bad/overflowing_velocity.yaml", 5, 5, "bodies[0] 'bob'", "kinetic energy or momentum is not finite",
   "did not converge"},
  {"tests/inputs/bad/overflowing_spring.yaml", 7, 5, "springs[0] (linear)", "potential energy is not finite",
   "did not converge"},
};

static void TestBadInput(void **state)
{
  const BadRun *bad = (const BadRun *)*state;
  char          input[PATH_SIZE], dir[PATH_SIZE], out[PATH_SIZE], csv[PATH_SIZE], where[PATH_SIZE + 64], name[64];
  const char   *message;
  ProgramRun    run;

  snprintf(name, sizeof(name), "bad%d", (int)(bad - bad_runs));
  SourcePath(input, bad->file);
  CaseDirectory(dir, name);
  JoinPath(out, dir, "out");
  JoinPath(csv, out, "diagnostics.csv");
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", out, NULL);
  ExpectUserError(bad->file, &run);
  snprintf(where, sizeof(where), "%s:%d:%d: ", input, bad->line, bad->column);
  ExpectContains("stderr", run.err, where);
  message = strstr(run.err, where) + strlen(where); /* the path itself may contain any word */
  ExpectContains("the message", message, bad->what);
  ExpectContains("the message", message, bad->also);
  if (bad->absent) ExpectLacks("the message", message, bad->absent);
  if (FileExists(csv)) fail_msg("%s: %s was written", bad->file, csv);
  FreeRun(&run);
}

static void TestNoInput(void **state)
{
  char       dir[PATH_SIZE], out[PATH_SIZE], csv[PATH_SIZE];
  ProgramRun run;

  (void)state;
  CaseDirectory(dir, "no_input");
  JoinPath(out, dir, "out");
  JoinPath(csv, out, "diagnostics.csv");
  run = RunProgram(dir, "-mbs_output_dir", out, NULL);
  ExpectUserError("no -i", &run);
  if (!HasPhrase(run.err, "-i")) fail_msg("stderr does not mention -i:\n%s", run.err);
  if (FileExists(csv)) fail_msg("%s was written", csv);
  FreeRun(&run);
}

/* An unknown trajectory format lists the registered ones (and no empty name among them) */
static void TestUnknownTrajectoryFormat(void **state)
{
  char       dir[PATH_SIZE], input[PATH_SIZE];
  ProgramRun run;

  (void)state;
  CaseDirectory(dir, "unknown_trajectory_format");
  SourcePath(input, "inputs/pendulum3d.yaml");
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, "-mbs_trajectory", "vtk", NULL);
  ExpectUserError("unknown trajectory format", &run);
  ExpectContains("stderr", run.err, "Unknown trajectory format 'vtk': expected one of xdmf, or none");
  FreeRun(&run);
}

static void TestMissingFile(void **state)
{
  char       dir[PATH_SIZE], input[PATH_SIZE], csv[PATH_SIZE];
  ProgramRun run;

  (void)state;
  CaseDirectory(dir, "missing_file");
  JoinPath(input, dir, "no_such_file.yaml");
  JoinPath(csv, dir, "diagnostics.csv");
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, NULL);
  ExpectUserError("missing file", &run);
  ExpectContains("stderr", run.err, input);
  if (FileExists(csv)) fail_msg("%s was written", csv);
  FreeRun(&run);
}

/* ---------------------------------------------------------------- 2.-4. the spherical pendulum */

static const char diagnostics_header[] = "step,t,E,T,V,Jx,Jy,Jz,Lx,Ly,Lz,g_max,gv_max,newton_its,Gv_max,W,D,av_max";

enum {
  COL_STEP = 0,
  COL_T    = 1,
  COL_E    = 2,
  COL_G    = 11,
  COL_GV   = 12,
  COL_ITS  = 13,
  COL_GVS  = 14,
  COL_W    = 15,
  COL_D    = 16,
  COL_AV   = 17,
  NCOLS    = 18
};

static void ReadDiagnostics(const char *dir, Csv *csv)
{
  char path[PATH_SIZE];

  JoinPath(path, dir, "diagnostics.csv");
  ReadCsv(path, csv);
  assert_string_equal(csv->header, diagnostics_header);
  assert_int_equal(csv->ncols, NCOLS);
}

/* The provenance comments of an output of a run of `input` with the option `option`: the version, the input's
   name, size and FNV-1a hash (computed here from the file), the option among the options. */
static void ExpectProvenance(const char *file, const char *comments, const char *input, const char *option)
{
  char               line[PATH_SIZE + 128];
  char              *text = ReadFile(input);
  unsigned long long h    = 14695981039346656037ULL;

  if (!text) fail_msg("cannot read %s", input);
  for (const unsigned char *c = (const unsigned char *)text; *c; c++) h = (h ^ *c) * 1099511628211ULL;
  snprintf(line, sizeof(line), "# program: gglmbs %s (PETSc ", GGLMBS_TEST_VERSION);
  if (strncmp(comments, line, strlen(line))) fail_msg("%s does not start with '%s':\n%s", file, line, comments);
  snprintf(line, sizeof(line), "\n# input: %s (%zu bytes, FNV-1a 64 %016llx)\n", input, strlen(text), h);
  ExpectContains(file, comments, line);
  snprintf(line, sizeof(line), " %s", option);
  ExpectContains(file, comments, "\n# options: -i ");
  ExpectContains(file, comments, line);
  free(text);
}

static void ExpectSuccess(const char *name, const ProgramRun *run)
{
  if (!run->exited || run->status)
    fail_msg("%s: gglmbs exited with status %d; stderr:\n%s", name, run->status, run->err);
  ExpectLacks("stderr", run->err, "PETSC ERROR");
}

/* stdout has one summary line "gglmbs: ..." containing each phrase as whole words. */
static void ExpectSummary(const ProgramRun *run, const char *const phrases[])
{
  char line[PATH_SIZE];

  if (LinesStarting(run->out, "gglmbs:", line, sizeof(line)) != 1)
    fail_msg("expected one summary line 'gglmbs: ...' on stdout, got\n%s", run->out);
  for (int i = 0; phrases[i]; i++)
    if (!HasPhrase(line, phrases[i])) fail_msg("the summary line\n  %s\nlacks\n  %s", line, phrases[i]);
}

static void TestPendulum(void **state)
{
  static const char *const summary[] = {
    "1 bodies", "3 coordinates", "1 constraints", "8 unknowns", "scheme em", "10 steps", NULL};
  const double h = 0.05;
  char         input[PATH_SIZE], dir[PATH_SIZE], statefile[PATH_SIZE], tmp[PATH_SIZE];
  Csv          d, s;
  ProgramRun   run;

  (void)state;
  SourcePath(input, "inputs/pendulum3d.yaml");
  CaseDirectory(dir, "pendulum");
  JoinPath(statefile, dir, "state.csv");
  run = RunProgram(dir, "-i", input, "-mbs_t_end", "0.5", "-mbs_output_dir", dir, "-mbs_write_state", statefile, NULL);
  ExpectSuccess("pendulum", &run);
  ExpectSummary(&run, summary);

  /* diagnostics: steps 0..10, exact energy conservation, constraints held, Newton iterations counted */
  ReadDiagnostics(dir, &d);
  ExpectProvenance("diagnostics.csv", d.comments, input, "-mbs_t_end 0.5");
  assert_int_equal(d.nrows, 11);
  for (int i = 0; i < d.nrows; i++) {
    const double *r = d.v[i];

    if (r[COL_STEP] != i) fail_msg("row %d: step %g, expected %d", i + 1, r[COL_STEP], i);
    if (fabs(r[COL_T] - i * h) > 1e-12) fail_msg("step %d: t = %.17g, expected %.17g", i, r[COL_T], i * h);
    if (i == 0 ? r[COL_ITS] != 0 : r[COL_ITS] < 1) fail_msg("step %d: newton_its = %g", i, r[COL_ITS]);
    if (r[COL_W] != 0 || r[COL_D] != 0 || r[COL_AV] != 0) /* no external forces, no dampers, no velocity constraints */
      fail_msg("step %d: W = %g, D = %g, av_max = %g, expected 0", i, r[COL_W], r[COL_D], r[COL_AV]);
    if (fabs(r[COL_E] - d.v[0][COL_E]) > 1e-12 * fabs(d.v[0][COL_E]))
      fail_msg("step %d: E = %.17g, E(0) = %.17g", i, r[COL_E], d.v[0][COL_E]);
    if (r[COL_G] > 1e-10 || r[COL_GV] > 1e-10) fail_msg("step %d: g_max = %g, gv_max = %g", i, r[COL_G], r[COL_GV]);
    if (!isnan(r[COL_GVS]))
      fail_msg("step %d: Gv_max = %g, expected an empty field for em (no velocity unknown)", i, r[COL_GVS]);
  }

  /* the final state: on the unit sphere, velocity tangent to it */
  ReadCsv(statefile, &s);
  ExpectProvenance("state.csv", s.comments, input, "-mbs_t_end 0.5");
  assert_string_equal(s.header, "index,q,p");
  assert_int_equal(s.nrows, 3);
  {
    double qq = 0, qp = 0;

    for (int i = 0; i < 3; i++) {
      if (s.v[i][0] != i) fail_msg("state.csv row %d: index %g", i + 1, s.v[i][0]);
      qq += s.v[i][1] * s.v[i][1];
      qp += s.v[i][1] * s.v[i][2];
    }
    if (fabs(sqrt(qq) - 1) > 1e-10) fail_msg("|q| = %.17g, expected 1", sqrt(qq));
    if (fabs(qp) > 1e-10) fail_msg("q.p = %.3e, expected 0", qp);
  }
  if (snprintf(tmp, sizeof(tmp), "%s.tmp", statefile) >= (int)sizeof(tmp)) fail_msg("path too long: %s.tmp", statefile);
  if (FileExists(tmp)) fail_msg("%s was left behind", tmp);
  FreeRun(&run);
}

/* Command-line options override the file's time step, final time and output frequency; the output
   directory is created with its parents. */
static void TestOverrides(void **state)
{
  static const char *const summary[] = {"scheme em", "h = 0.1", "3 steps", NULL};
  static const double      steps[3]  = {0, 2, 3};
  char                     input[PATH_SIZE], dir[PATH_SIZE], out[PATH_SIZE];
  Csv                      d;
  ProgramRun               run;

  (void)state;
  SourcePath(input, "inputs/pendulum3d.yaml");
  CaseDirectory(dir, "overrides");
  JoinPath(out, dir, "a/b");
  run = RunProgram(dir, "-i", input, "-mbs_dt", "0.1", "-mbs_t_end", "0.3", "-mbs_output_every", "2", "-mbs_output_dir",
                   out, NULL);
  ExpectSuccess("overrides", &run);
  ExpectSummary(&run, summary);
  ReadDiagnostics(out, &d);
  assert_int_equal(d.nrows, 3);
  for (int i = 0; i < 3; i++) {
    if (d.v[i][COL_STEP] != steps[i]) fail_msg("row %d: step %g, expected %g", i + 1, d.v[i][COL_STEP], steps[i]);
    if (fabs(d.v[i][COL_T] - 0.1 * steps[i]) > 1e-12)
      fail_msg("row %d: t = %.17g, expected %g", i + 1, d.v[i][COL_T], 0.1 * steps[i]);
  }
  FreeRun(&run);
}

/* A step whose Newton solve does not converge stops the run with a one-line report; what was written
   before stays a valid CSV file, the trajectory lists the steps written before (their sync is at the stop),
   and no final state is written. */
static void TestNotConverged(void **state)
{
  char       input[PATH_SIZE], dir[PATH_SIZE], statefile[PATH_SIZE], line[PATH_SIZE];
  Csv        d;
  ProgramRun run;

  (void)state;
  SourcePath(input, "inputs/pendulum3d.yaml");
  CaseDirectory(dir, "not_converged");
  JoinPath(statefile, dir, "state.csv");
  run = RunProgram(dir, "-i", input, "-snes_max_it", "1", "-mbs_output_dir", dir, "-mbs_write_state", statefile,
                   "-mbs_trajectory", "xdmf", NULL);
  ExpectUserError("not converged", &run);
  {
    char  xdmf[PATH_SIZE];
    char *text;
    JoinPath(xdmf, dir, "trajectory.xdmf");
    text = ReadFile(xdmf);
    if (!text || !strstr(text, "<Grid Name=\"step 0\"") || !strstr(text, "</Xdmf>\n"))
      fail_msg("%s does not list step 0 in a complete file:\n%s", xdmf, text ? text : "(missing)");
    free(text);
  }
  ExpectContains("stderr", run.err, "Step 1 ");
  ExpectContains("stderr", run.err, "did not converge");
  ExpectContains("stderr", run.err, "residual norm");
  if (LinesStarting(run.out, "gglmbs:", line, sizeof(line)))
    fail_msg("a summary line after a failed run:\n%s", run.out);
  ReadDiagnostics(dir, &d);
  assert_int_equal(d.nrows, 1);
  assert_true(d.v[0][COL_STEP] == 0 && d.v[0][COL_T] == 0 && d.v[0][COL_ITS] == 0);
  if (FileExists(statefile)) fail_msg("%s was written after a failed run", statefile);
  FreeRun(&run);
}

/* A residual that is not finite at the step's start is reported as such (inf or nan, not 0), with advice that
   does not send the user to a smaller step; once -mbs_adapt gave up, the advice does not offer it again. */
static void TestNonFiniteResidual(void **state)
{
  char       input[PATH_SIZE], dir[PATH_SIZE];
  ProgramRun run;

  (void)state;
  SourcePath(input, "tests/inputs/app/overflowing_gravity.yaml");
  CaseDirectory(dir, "non_finite");
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, "-mbs_failure_checkpoint", "none", NULL);
  ExpectUserError("non-finite residual", &run);
  ExpectContains("stderr", run.err, "did not converge");
  ExpectLacks("stderr", run.err, "residual norm 0.000e+00");
  if (!strstr(run.err, "residual norm inf") && !strstr(run.err, "residual norm nan"))
    fail_msg("the residual norm is not reported as inf or nan:\n%s", run.err);
  ExpectContains("stderr", run.err, "not finite");
  ExpectLacks("stderr", run.err, "Try a smaller step");
  FreeRun(&run);
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, "-mbs_failure_checkpoint", "none", "-mbs_adapt",
                   "-mbs_adapt_max_halvings", "2", NULL);
  ExpectUserError("non-finite residual, adapt", &run);
  ExpectContains("stderr", run.err, "after 2 halvings");
  ExpectLacks("stderr", run.err, "-mbs_adapt,");
  FreeRun(&run);
}

/* An option whose value is not what it must be is named in one line: a number that is not one, a size that is
   not one, a tolerance out of range; and an option nothing read is named after the run. */
static void TestOptionErrors(void **state)
{
  static const char *const cases[][3] = {
    {"-mbs_dt", "abc", "option -mbs_dt: expected a number, got 'abc'"},
    {"-mbs_output_every", "x2", "option -mbs_output_every: expected a number, got 'x2'"},
    {"-mbs_memory_limit", "abc", "-mbs_memory_limit: expected a size in bytes"},
    {"-mbs_initial_tolerance", "-1", "-mbs_initial_tolerance: expected a positive finite number"},
  };
  char       input[PATH_SIZE], chain[PATH_SIZE], dir[PATH_SIZE], line[PATH_SIZE];
  ProgramRun run;

  (void)state;
  SourcePath(input, "inputs/pendulum3d.yaml");
  SourcePath(chain, "inputs/chain1000.yaml"); /* a generated model: its size is checked against -mbs_memory_limit */
  CaseDirectory(dir, "option_errors");
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    run = RunProgram(dir, "-i", chain, "-mbs_output_dir", dir, cases[i][0], cases[i][1], NULL);
    ExpectUserError(cases[i][0], &run);
    if (LinesStarting(run.err, "gglmbs: error: ", line, sizeof(line)) != 1)
      fail_msg("%s %s: expected one line 'gglmbs: error: ...', got\n%s", cases[i][0], cases[i][1], run.err);
    ExpectContains("the message", line, cases[i][2]);
    FreeRun(&run);
  }
  /* a bad memory limit is an error for a model of bodies listed one by one too (no generator sizes it) */
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, "-mbs_t_end", "0.1", "-mbs_memory_limit", "abc", NULL);
  ExpectUserError("-mbs_memory_limit, no generator", &run);
  ExpectContains("stderr", run.err, "-mbs_memory_limit: expected a size in bytes");
  FreeRun(&run);
  /* gglmbs' own options misspelt: an error before any step; others (a solver's) are reported after the run */
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, "-mbs_t_end", "0.1", "-mbs_sheme", "vi-a", NULL);
  ExpectUserError("misspelt option", &run);
  ExpectContains("stderr", run.err, "option -mbs_sheme is not an option of gglmbs");
  ExpectLacks("stdout", run.out, "steps in");
  FreeRun(&run);
  /* the Schur-AMG preconditioner's options on a run that solves by LU: said so */
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, "-mbs_t_end", "0.1", "-mbs_schur_axial", NULL);
  ExpectUserError("a Schur-AMG option under LU", &run);
  ExpectContains("stderr", run.err, "option -mbs_schur_axial was not read: it belongs to the Schur-AMG preconditioner");
  ExpectLacks("stdout", run.out, "steps in");
  FreeRun(&run);
  /* the options of the Schur-AMG's inner preconditioners' nested solvers are read when those are set up, in the first
     step: no error before the run, and read (no warning after it); a misspelt one is named after the run */
  for (int typo = 0; typo < 2; typo++) {
    run = RunProgram(dir, "-i", chain, "-mbs_output_dir", dir, "-mbs_t_end", "0.002", "-mbs_solver", "schur",
                     "-mbs_schur_axial", "-mbs_schur_primal_pc_type", "bjacobi",
                     typo ? "-mbs_schur_primal_sub_pc_typo" : "-mbs_schur_primal_sub_pc_type", "ilu", NULL);
    ExpectSuccess("a nested option of the Schur-AMG's primal solver", &run);
    ExpectContains("stdout", run.out, "steps in");
    if (typo)
      ExpectContains("stderr", run.err, "option -mbs_schur_primal_sub_pc_typo ilu was given but never used");
    else
      ExpectLacks("stderr", run.err, "never used");
    FreeRun(&run);
  }
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, "-mbs_t_end", "0.1", "-snes_linesearch_typ", "bt", NULL);
  ExpectSuccess("misspelt solver option", &run);
  ExpectContains("stderr", run.err, "option -snes_linesearch_typ bt was given but never used");
  FreeRun(&run);
  /* a final time between two steps would be overshot */
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, "-mbs_dt", "0.05", "-mbs_t_end", "0.12", NULL);
  ExpectUserError("final time between steps", &run);
  ExpectContains("stderr", run.err, "is not a whole number of steps of 0.05");
  ExpectContains("stderr", run.err, "Give a final time of 0.1 or 0.15");
  FreeRun(&run);
  /* a failed step with -mbs_error_if_step_fails 0: exit 0, and the reason is said */
  run = RunProgram(dir, "-i", input, "-mbs_output_dir", dir, "-mbs_t_end", "0.1", "-snes_max_it", "1",
                   "-mbs_error_if_step_fails", "0", NULL);
  ExpectSuccess("failed step, no error", &run);
  ExpectContains("stderr", run.err, "the run stopped at step 0 (t = 0");
  ExpectContains("stderr", run.err, "DIVERGED_NONLINEAR_SOLVE");
  FreeRun(&run);
}

/* A scheme with a velocity unknown (vi-a) chosen and parametrised from the command line: its own
   velocity residual fills the last column (empty at step 0), while the nodes violate the position
   constraints (seed 004 Sect. 6.1). */
static void TestSchemeVIA(void **state)
{
  static const char *const summary[] = {"scheme vi-a", "11 unknowns", "10 steps", NULL};
  char                     input[PATH_SIZE], dir[PATH_SIZE];
  Csv                      d;
  ProgramRun               run;
  double                   gmax = 0;

  (void)state;
  SourcePath(input, "inputs/pendulum3d.yaml");
  CaseDirectory(dir, "vi_a");
  run = RunProgram(dir, "-i", input, "-mbs_scheme", "vi-a", "-mbs_theta", "0.5", "-mbs_t_end", "0.5", "-mbs_output_dir",
                   dir, NULL);
  ExpectSuccess("vi-a", &run);
  ExpectSummary(&run, summary);
  ReadDiagnostics(dir, &d);
  assert_int_equal(d.nrows, 11);
  if (!isnan(d.v[0][COL_GVS])) fail_msg("step 0: Gv_max = %g, expected empty (no step taken)", d.v[0][COL_GVS]);
  for (int i = 1; i < d.nrows; i++) {
    if (!(d.v[i][COL_GVS] <= 1e-10)) fail_msg("step %d: Gv_max = %g, expected <= 1e-10", i, d.v[i][COL_GVS]);
    gmax = fmax(gmax, d.v[i][COL_G]);
  }
  if (!(gmax > 1e-6)) fail_msg("vi-a: max g_max = %g, expected the nodes to violate the constraint", gmax);
  FreeRun(&run);
}

/* EM on the four particles at h = 0.675 with Newton's method proper (-mbs_jacobian_reuse 0): a step fails
   from the simple predictor before t = 81 (120 steps); with -mbs_adapt it is retried in halves, each retry reported,
   and the run completes. (The default extrapolation predictor, with its retry from the advanced one, gets through
   these steps: the simple predictor is what makes a step fail here.) */
static void TestAdapt(void **state)
{
  char       input[PATH_SIZE], dir[PATH_SIZE], line[PATH_SIZE];
  ProgramRun run;

  (void)state;
  SourcePath(input, "inputs/four_particle.yaml");
  CaseDirectory(dir, "adapt");
  run = RunProgram(dir, "-i", input, "-mbs_dt", "0.675", "-mbs_t_end", "81", "-mbs_output_dir", dir,
                   "-mbs_jacobian_reuse", "0", "-mbs_predictor", "simple", NULL);
  ExpectUserError("no adapt", &run);
  ExpectContains("stderr", run.err, "did not converge");
  ExpectContains("stderr", run.err, "-mbs_adapt");
  FreeRun(&run);
  run = RunProgram(dir, "-i", input, "-mbs_dt", "0.675", "-mbs_t_end", "81", "-mbs_output_dir", dir,
                   "-mbs_jacobian_reuse", "0", "-mbs_predictor", "simple", "-mbs_adapt", NULL);
  ExpectSuccess("adapt", &run);
  ExpectContains("stdout", run.out, "retrying as 2 sub-steps of h = 0.3375");
  if (LinesStarting(run.out, "gglmbs: inputs", line, sizeof(line)) > 1)
    fail_msg("more than one summary line:\n%s", run.out);
  FreeRun(&run);
}

/* ---------------------------------------------------------------- 5. help */

static void TestHelp(void **state)
{
  char       dir[PATH_SIZE];
  ProgramRun run;

  (void)state;
  CaseDirectory(dir, "help");
  run = RunProgram(dir, "-help", NULL);
  ExpectSuccess("-help", &run);
  ExpectContains("stdout", run.out, "Usage: gglmbs -i input.yaml");
  for (int i = 0; i < 6; i++) {
    static const char *const schemes[] = {"em", "em-g", "vi-s", "vi-a", "vi-b", "rattle"};
    if (!HasLine(run.out, schemes[i])) fail_msg("-help does not list the scheme %s:\n%s", schemes[i], run.out);
  }
  ExpectContains("stdout", run.out, "-mbs_predictor");
  ExpectContains("stdout", run.out, "-mbs_adapt");
  ExpectContains("stdout", run.out, "gglmbs --version");
  FreeRun(&run);
  /* with an input: the stepper's options, and the Schur-AMG's, which it reads only when it is the solver, named either
     way */
  {
    char chain[PATH_SIZE];
    SourcePath(chain, "inputs/chain1000.yaml");
    for (int schur = 0; schur < 2; schur++) {
      run = RunProgram(dir, "-i", chain, "-mbs_output_dir", dir, "-mbs_t_end", "0.001", "-help", "-mbs_solver",
                       schur ? "schur" : "auto", NULL);
      ExpectSuccess("-i chain1000.yaml -help", &run);
      ExpectContains("stdout", run.out, "-mbs_solver <now");
      ExpectContains("stdout", run.out, schur ? "-mbs_schur_axial: <" : "Under -mbs_solver schur (docs/solvers.md)");
      FreeRun(&run);
    }
  }
  /* the version of the library and of the PETSc it was built with, one line, without starting MPI */
  run = RunProgram(dir, "--version", NULL);
  ExpectSuccess("--version", &run);
  ExpectContains("stdout", run.out, "gglmbs " GGLMBS_TEST_VERSION " (PETSc ");
  if (LinesStarting(run.out, "gglmbs ", dir, sizeof(dir)) != 1)
    fail_msg("--version: expected one line, got\n%s", run.out);
  FreeRun(&run);
}

/* ---------------------------------------------------------------- checkpoint and restart */

/* Copies the first nbytes of a file (all of it if nbytes < 0). */
static void CopyFile(const char *from, const char *to, long nbytes)
{
  char  *text = ReadFile(from);
  FILE  *fp;
  size_t n;

  if (!text) fail_msg("cannot read %s", from);
  {
    struct stat sb;
    if (stat(from, &sb)) fail_msg("cannot stat %s", from);
    n = (size_t)sb.st_size;
  }
  if (nbytes >= 0 && (size_t)nbytes < n) n = (size_t)nbytes;
  fp = fopen(to, "wb");
  if (!fp || fwrite(text, 1, n, fp) != n || fclose(fp)) fail_msg("cannot write %s", to);
  free(text);
}

/* The diagnostics of a run (a) and of the same run restarted (b) have the same rows, byte for byte (otherwise fails
   naming the first line that differs), and b's provenance says it was continued. */
static void ExpectSameRows(const char *a, const char *b)
{
  char       *fa = ReadFile(a), *fb = ReadFile(b);
  const char *ta, *tb;
  int         line = 1;

  if (!fa || !fb) fail_msg("cannot read %s or %s", a, b);
  ExpectContains(b, fb, "\n# continued from step ");
  ta = AfterComments(fa);
  tb = AfterComments(fb);
  for (size_t i = 0; ta[i] || tb[i]; i++) {
    if (ta[i] != tb[i]) {
      const char *la = ta + i, *lb = tb + i;
      while (la > ta && la[-1] != '\n') la--;
      while (lb > tb && lb[-1] != '\n') lb--;
      print_error("%s and %s differ from row line %d:\n  %.200s\n  %.200s\n", a, b, line, la, lb);
      free(fa);
      free(fb);
      fail();
    }
    line += ta[i] == '\n';
  }
  free(fa);
  free(fb);
}

#define RESTART_STEPS "40"
#define RESTART_T_END "0.04"
#define RESTART_T_MID "0.02"

/* A run of 40 steps of h = 1e-3, and the same run stopped at step 20 (checkpoints every 7 steps and at
   its end) and continued from its last checkpoint, write byte-identical diagnostics: every energy,
   momentum, constraint residual and Newton iteration count to the last bit. Before the restart the
   stopped run's file is given 20 more rows of garbage, as a run killed after its checkpoint leaves them:
   the restart must replace them. */
static void RestartCase(const char *name, int np, const char *input_rel, const char *opt, const char *val,
                        const char *flag)
{
  char       input[PATH_SIZE], dir[PATH_SIZE], a[PATH_SIZE], b[PATH_SIZE], fa[PATH_SIZE], fb[PATH_SIZE], ck[PATH_SIZE];
  ProgramRun run;

  SourcePath(input, input_rel);
  CaseDirectory(dir, name);
  JoinPath(a, dir, "full");
  JoinPath(b, dir, "stopped");
  run = RunParallel(dir, np, "-i", input, opt, val, "-mbs_dt", "1e-3", "-mbs_output_every", "1", "-mbs_t_end",
                    RESTART_T_END, "-mbs_output_dir", a, flag, NULL);
  ExpectSuccess(name, &run);
  FreeRun(&run);
  run = RunParallel(dir, np, "-i", input, opt, val, "-mbs_dt", "1e-3", "-mbs_output_every", "1", "-mbs_t_end",
                    RESTART_T_MID, "-mbs_output_dir", b, "-mbs_checkpoint_every", "7", flag, NULL);
  ExpectSuccess(name, &run);
  FreeRun(&run);
  JoinPath(fb, b, "diagnostics.csv");
  {
    FILE *fp = fopen(fb, "a");
    if (!fp) fail_msg("cannot append to %s", fb);
    for (int i = 21; i <= 40; i++) fprintf(fp, "%d,0,1,2,3,4,5,6,7,8,9,10,11,12,\n", i);
    fclose(fp);
  }
  JoinPath(ck, b, "checkpoint.bin");
  if (!FileExists(ck)) fail_msg("%s: no checkpoint %s", name, ck);
  run = RunParallel(dir, np, "-i", input, opt, val, "-mbs_dt", "1e-3", "-mbs_output_every", "1", "-mbs_t_end",
                    RESTART_T_END, "-mbs_output_dir", b, "-mbs_restart", ck, flag, NULL);
  ExpectSuccess(name, &run);
  FreeRun(&run);
  JoinPath(fa, a, "diagnostics.csv");
  ExpectSameRows(fa, fb);
  {
    char tmp[PATH_SIZE];
    JoinPath(tmp, b, "checkpoint.bin.tmp");
    if (FileExists(tmp)) fail_msg("%s was left behind", tmp);
  }
}

/* Chains under modified Newton (kept Jacobian rebuilt at the restart), one rank and two */
static void TestRestartChain(void **state)
{
  (void)state;
  RestartCase("restart_chain", 1, "inputs/chain1000.yaml", "-mbs_scheme", "em", NULL);
}

static void TestRestartChainParallel(void **state)
{
  (void)state;
  RestartCase("restart_chain_np2", 2, "inputs/chain1000.yaml", "-mbs_scheme", "em", NULL);
}

/* VI-B on the heavy top (Newton proper; its own velocity residual Gv_max is in the diagnostics) */
static void TestRestartTop(void **state)
{
  (void)state;
  RestartCase("restart_top", 1, "inputs/heavy_top.yaml", "-mbs_scheme", "vi-b", NULL);
}

/* RATTLE on the four particles, under modified Newton (its multipliers of two configurations, lambda and mu) */
static void TestRestartRattle(void **state)
{
  (void)state;
  RestartCase("restart_rattle", 1, "inputs/four_particle.yaml", "-mbs_scheme", "rattle", "-mbs_jacobian_reuse");
}

/* A Galerkin integrator with a stage field (the triple pendulum's 3-point LGG), under modified Newton */
static void TestRestartGalerkin(void **state)
{
  (void)state;
  RestartCase("restart_galerkin", 1, "inputs/triple_pendulum.yaml", "-mbs_jacobian_reuse", "1", NULL);
}

/* Loads that change over time under modified Newton: the kept Jacobian is rebuilt at the time it was assembled at */
static void TestRestartLoads(void **state)
{
  (void)state;
  RestartCase("restart_loads", 1, "tests/inputs/loads/driven_top.yaml", "-mbs_jacobian_reuse", "1", NULL);
}

/* Bricard's over-constrained loop under modified Newton: the rows eliminated as redundant are chosen again from
   the restored state, and the kept Jacobian rebuilt with them, so the restart is bit-identical too */
static void TestRestartRedundant(void **state)
{
  (void)state;
  RestartCase("restart_bricard", 1, "inputs/bricard.yaml", "-mbs_jacobian_reuse", "1",
              "-mbs_allow_redundant_constraints");
}

/* A checkpoint written on 2 ranks continues on 1: the state is restored (not the solver's), the run says
   so and agrees with the uninterrupted run to round-off. */
static void TestRestartOtherRanks(void **state)
{
  char       input[PATH_SIZE], dir[PATH_SIZE], a[PATH_SIZE], b[PATH_SIZE], ck[PATH_SIZE];
  Csv        da, db;
  ProgramRun run;

  (void)state;
  SourcePath(input, "inputs/chain1000.yaml");
  CaseDirectory(dir, "restart_ranks");
  JoinPath(a, dir, "full");
  JoinPath(b, dir, "stopped");
  run = RunProgram(dir, "-i", input, "-mbs_dt", "1e-3", "-mbs_output_every", "1", "-mbs_t_end", RESTART_T_END,
                   "-mbs_output_dir", a, NULL);
  ExpectSuccess("restart_ranks", &run);
  FreeRun(&run);
  run = RunParallel(dir, 2, "-i", input, "-mbs_dt", "1e-3", "-mbs_output_every", "1", "-mbs_t_end", RESTART_T_MID,
                    "-mbs_output_dir", b, "-mbs_checkpoint_every", "20", NULL);
  ExpectSuccess("restart_ranks", &run);
  FreeRun(&run);
  JoinPath(ck, b, "checkpoint.bin");
  run = RunProgram(dir, "-i", input, "-mbs_dt", "1e-3", "-mbs_output_every", "1", "-mbs_t_end", RESTART_T_END,
                   "-mbs_output_dir", b, "-mbs_restart", ck, NULL);
  ExpectSuccess("restart_ranks", &run);
  ExpectContains("stdout", run.out, "restored the state only");
  FreeRun(&run);
  ReadDiagnostics(a, &da);
  ReadDiagnostics(b, &db);
  assert_int_equal(da.nrows, 41);
  assert_int_equal(db.nrows, 41);
  for (int i = 0; i < da.nrows; i++) {
    if (db.v[i][COL_STEP] != i) fail_msg("row %d: step %g", i + 1, db.v[i][COL_STEP]);
    for (int j = COL_E; j <= COL_E + 3; j++) /* E, T, V, Jx */
      if (fabs(db.v[i][j] - da.v[i][j]) > 1e-10 * (fabs(da.v[i][COL_E]) + fabs(da.v[i][j])))
        fail_msg("step %d, column %d: %.17g after the restart on 1 rank, %.17g uninterrupted", i, j + 1, db.v[i][j],
                 da.v[i][j]);
    if (db.v[i][COL_G] > 1e-10) fail_msg("step %d: g_max = %g", i, db.v[i][COL_G]);
  }
}

/* Bad checkpoints: one clear line each, the run does not start. */
static void TestRestartErrors(void **state)
{
  static const struct {
    const char *name, *input, *opt, *val, *file, *message;
  } cases[] = {
    {"missing", "inputs/chain1000.yaml", "-mbs_scheme", "em", "nonexistent.bin", "no such readable file"},
    {"truncated", "inputs/chain1000.yaml", "-mbs_scheme", "em", "truncated.bin", "truncated or corrupt"},
    {"header only", "inputs/chain1000.yaml", "-mbs_scheme", "em", "short.bin", "truncated or unreadable"},
    {"not a checkpoint", "inputs/chain1000.yaml", "-mbs_scheme", "em", "foreign.bin", "is not a gglmbs checkpoint"},
    {"other model", "inputs/rigid_chain1000.yaml", "-mbs_scheme", "em", "checkpoint.bin",
     "written for a model of 1000 bodies"},
    {"other scheme", "inputs/chain1000.yaml", "-mbs_scheme", "vi-b", "checkpoint.bin",
     "written by scheme em; this run uses vi-b"},
    {"other step", "inputs/chain1000.yaml", "-mbs_dt", "2e-3", "checkpoint.bin", "written with step size h = 0.001"},
  };
  char       input[PATH_SIZE], dir[PATH_SIZE], ck[PATH_SIZE], path[PATH_SIZE];
  ProgramRun run;

  (void)state;
  SourcePath(input, "inputs/chain1000.yaml");
  CaseDirectory(dir, "restart_errors");
  run = RunProgram(dir, "-i", input, "-mbs_dt", "1e-3", "-mbs_t_end", "0.005", "-mbs_output_dir", dir,
                   "-mbs_checkpoint_every", "5", NULL);
  ExpectSuccess("restart_errors", &run);
  FreeRun(&run);
  JoinPath(ck, dir, "checkpoint.bin");
  JoinPath(path, dir, "truncated.bin");
  {
    struct stat sb;
    if (stat(ck, &sb)) fail_msg("no checkpoint %s", ck);
    CopyFile(ck, path, (long)(sb.st_size / 2));
  }
  JoinPath(path, dir, "short.bin");
  CopyFile(ck, path, 40);
  JoinPath(path, dir, "foreign.bin");
  CopyFile(input, path, -1);
  for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
    char model[PATH_SIZE], file[PATH_SIZE];
    SourcePath(model, cases[i].input);
    JoinPath(file, dir, cases[i].file);
    run = RunProgram(dir, "-i", model, cases[i].opt, cases[i].val, "-mbs_t_end", "0.01", "-mbs_output_dir", dir,
                     "-mbs_restart", file, NULL);
    ExpectUserError(cases[i].name, &run);
    ExpectContains(cases[i].name, run.err, cases[i].message);
    ExpectContains(cases[i].name, run.err, cases[i].file);
    FreeRun(&run);
  }
}

/* ---------------------------------------------------------------- interrupts, failures, full disks */

static pid_t SpawnProgram(const char *dir, int np, const char *disk, long disk_kib, ...)
{
  pid_t   pid;
  va_list ap;

  va_start(ap, disk_kib);
  pid = SpawnProgramV(dir, np, disk, disk_kib, ap);
  va_end(ap);
  return pid;
}

/* The lines of a file after its comments (header and rows of a CSV file) */
static int CountLines(const char *path)
{
  char *text = ReadFile(path);
  int   n    = 0;

  if (!text) return 0;
  for (const char *c = AfterComments(text); *c; c++) n += *c == '\n';
  free(text);
  return n;
}

/* The number after "prefix" in text, or -1. */
static long NumberAfter(const char *text, const char *prefix)
{
  const char *s = strstr(text, prefix);

  return s ? strtol(s + strlen(prefix), NULL, 10) : -1;
}

/* A run stopped by a signal once it has written 20 rows: it finishes its step, writes a checkpoint and
   says how to continue, exits with 128 + the signal number; continued with -mbs_restart, its diagnostics
   equal the uninterrupted run's byte for byte. On 2 ranks the signal goes to mpiexec, which passes SIGTERM
   on to the ranks (OpenMPI), as a batch system's does. OpenMPI waits odls_base_sigkill_timeout seconds
   before that SIGTERM and as long again before a SIGKILL; 3 s instead of 1 leaves a loaded machine time
   to finish the step and write the checkpoint. The restart of a chain under modified Newton is bit-identical on 2 ranks
   too (MUMPS is deterministic on chains: docs/restart.md). */
static void InterruptCase(const char *name, int np, int sig, const char *signame)
{
  char input[PATH_SIZE], dir[PATH_SIZE], a[PATH_SIZE], b[PATH_SIZE], fa[PATH_SIZE], fb[PATH_SIZE], ck[PATH_SIZE],
    tmp[PATH_SIZE], line[PATH_SIZE], expect[64], t_end[32];
  ProgramRun run;
  pid_t      pid;
  long       step;

  SourcePath(input, "inputs/chain1000.yaml");
  CaseDirectory(dir, name);
  JoinPath(a, dir, "full");
  JoinPath(b, dir, "stopped");
  JoinPath(fb, b, "diagnostics.csv");
  pid = SpawnProgram(dir, np, NULL, 0, "-i", input, "-mbs_dt", "1e-3", "-mbs_t_end", "100", "-mbs_output_every", "3",
                     "-mbs_output_dir", b, NULL);
  for (int waited = 0; CountLines(fb) < 8; waited++) { /* header, step 0 and 6 more rows: it is stepping */
    if (waited > 6000) fail_msg("%s: no progress in 60 s", name);
    if (waitpid(pid, NULL, WNOHANG) == pid) fail_msg("%s: the run ended before the signal", name);
    nanosleep(&(struct timespec){0, 10000000}, NULL);
  }
  if (kill(pid, sig)) fail_msg("kill: %s", strerror(errno));
  run = WaitProgram(dir, pid);
  if (!run.exited)
    fail_msg("%s: killed by signal %d instead of stopping cleanly; stderr:\n%s", name, -run.status, run.err);
  if (np == 1 && run.status != 128 + sig)
    fail_msg("%s: exit status %d, expected %d; stderr:\n%s", name, run.status, 128 + sig, run.err);
  if (run.status == 0) fail_msg("%s: exit status 0 after %s", name, signame);
  ExpectLacks("stderr", run.err, "PETSC ERROR");
  if (LinesStarting(run.err, "gglmbs: error: ", line, sizeof(line)) != 1)
    fail_msg("%s: expected one line 'gglmbs: error: ...', got\n%s", name, run.err);
  snprintf(expect, sizeof(expect), "Interrupted by %s after step ", np == 1 ? signame : "SIGTERM");
  ExpectContains("the message", line, expect);
  step = NumberAfter(line, expect);
  JoinPath(ck, b, "checkpoint.bin");
  ExpectContains("the message", line, ck);
  ExpectContains("the message", line, "-mbs_restart");
  if (step < 6) fail_msg("%s: stopped after step %ld, before the 6 rows it had written", name, step);
  if (!FileExists(ck)) fail_msg("%s: no checkpoint %s", name, ck);
  JoinPath(tmp, b, "checkpoint.bin.tmp");
  if (FileExists(tmp)) fail_msg("%s: %s was left behind", name, tmp);
  {
    char *text = ReadFile(fb);
    if (!text || !*text || text[strlen(text) - 1] != '\n') fail_msg("%s: %s does not end in a whole row", name, fb);
    free(text);
  }
  FreeRun(&run);
  snprintf(t_end, sizeof(t_end), "%.3f", (step + 30) * 1e-3); /* 30 steps past the interrupt */
  run = RunParallel(dir, np, "-i", input, "-mbs_dt", "1e-3", "-mbs_t_end", t_end, "-mbs_output_every", "3",
                    "-mbs_output_dir", a, NULL);
  ExpectSuccess(name, &run);
  FreeRun(&run);
  run = RunParallel(dir, np, "-i", input, "-mbs_dt", "1e-3", "-mbs_t_end", t_end, "-mbs_output_every", "3",
                    "-mbs_output_dir", b, "-mbs_restart", ck, NULL);
  ExpectSuccess(name, &run);
  FreeRun(&run);
  JoinPath(fa, a, "diagnostics.csv");
  ExpectSameRows(fa, fb);
}

static void TestInterrupt(void **state)
{
  (void)state;
  InterruptCase("interrupt", 1, SIGINT, "SIGINT");
}

/* SIGHUP (a closed terminal, a batch system's hang-up) stops a run like SIGTERM: a checkpoint and exit 129 */
static void TestHangup(void **state)
{
  (void)state;
  InterruptCase("hangup", 1, SIGHUP, "SIGHUP");
}

static void TestInterruptParallel(void **state)
{
  (void)state;
  InterruptCase("interrupt_np2", 2, SIGINT, "SIGINT");
}

/* A step that fails leaves the state at its start in <output>/failed_step.bin, which the message names;
   continued from it with working solver options, the run equals the one that never failed. */
static void TestFailureCheckpoint(void **state)
{
  char       input[PATH_SIZE], dir[PATH_SIZE], a[PATH_SIZE], b[PATH_SIZE], fa[PATH_SIZE], fb[PATH_SIZE], ck[PATH_SIZE];
  ProgramRun run;

  (void)state;
  SourcePath(input, "inputs/heavy_top.yaml");
  CaseDirectory(dir, "failure_checkpoint");
  JoinPath(a, dir, "full");
  JoinPath(b, dir, "failed");
  JoinPath(ck, b, "failed_step.bin");
  run = RunProgram(dir, "-i", input, "-mbs_scheme", "vi-b", "-mbs_t_end", "0.04", "-mbs_output_dir", a, NULL);
  ExpectSuccess("failure_checkpoint", &run);
  FreeRun(&run);
  /* the run to t = 0.02 succeeds; continued to 0.04 with one Newton iteration a step, step 11 fails */
  run = RunProgram(dir, "-i", input, "-mbs_scheme", "vi-b", "-mbs_t_end", "0.02", "-mbs_output_dir", b,
                   "-mbs_checkpoint_every", "10", NULL);
  ExpectSuccess("failure_checkpoint", &run);
  FreeRun(&run);
  {
    char first[PATH_SIZE];
    JoinPath(first, b, "checkpoint.bin");
    run = RunProgram(dir, "-i", input, "-mbs_scheme", "vi-b", "-mbs_t_end", "0.04", "-mbs_output_dir", b,
                     "-mbs_restart", first, "-snes_max_it", "1", NULL);
  }
  ExpectUserError("failure_checkpoint", &run);
  ExpectContains("stderr", run.err, "Step 11 ");
  ExpectContains("stderr", run.err, "did not converge");
  ExpectContains("stderr", run.err, ck);
  ExpectContains("stderr", run.err, "-mbs_restart");
  if (!FileExists(ck)) fail_msg("no failure checkpoint %s", ck);
  FreeRun(&run);
  run = RunProgram(dir, "-i", input, "-mbs_scheme", "vi-b", "-mbs_t_end", "0.04", "-mbs_output_dir", b, "-mbs_restart",
                   ck, NULL);
  ExpectSuccess("failure_checkpoint restart", &run);
  FreeRun(&run);
  JoinPath(fa, a, "diagnostics.csv");
  JoinPath(fb, b, "diagnostics.csv");
  ExpectSameRows(fa, fb);
}

/* VI-S on the four particles at h = 0.05 blows up (seed 004 Fig. 32): the run stops at the first step
   whose energy leaves E_0 by more than 10 times the energy scale max(|E_0|, T_0, |V_0|) (no gravity),
   found here from the diagnostics of the same run with the check off, and leaves that state for
   inspection. */
static void TestEnergyDivergence(void **state)
{
  char       input[PATH_SIZE], dir[PATH_SIZE], a[PATH_SIZE], b[PATH_SIZE], ck[PATH_SIZE], expect[64];
  Csv        d;
  ProgramRun run;
  int        first = -1;
  double     scale;

  (void)state;
  SourcePath(input, "inputs/four_particle.yaml");
  CaseDirectory(dir, "energy_divergence");
  JoinPath(a, dir, "unchecked");
  JoinPath(b, dir, "checked");
  run = RunProgram(dir, "-i", input, "-mbs_scheme", "vi-s", "-mbs_dt", "0.05", "-mbs_t_end", "0.5", "-mbs_output_dir",
                   a, "-mbs_energy_divergence", "0", NULL);
  FreeRun(&run); /* Newton may fail once the energy is far gone: the rows up to there are what counts */
  ReadDiagnostics(a, &d);
  scale = fmax(fabs(d.v[0][COL_E]), fmax(d.v[0][COL_E + 1], fabs(d.v[0][COL_E + 2])));
  for (int i = 1; i < d.nrows && first < 0; i++)
    if (!(fabs(d.v[i][COL_E] - d.v[0][COL_E]) <= 10 * scale)) first = (int)d.v[i][COL_STEP];
  if (first < 0) fail_msg("vi-s at h = 0.05 did not blow up within %d rows", d.nrows);
  run = RunProgram(dir, "-i", input, "-mbs_scheme", "vi-s", "-mbs_dt", "0.05", "-mbs_t_end", "0.5", "-mbs_output_dir",
                   b, NULL);
  ExpectUserError("energy divergence", &run);
  snprintf(expect, sizeof(expect), "Step %d ", first);
  ExpectContains("stderr", run.err, expect);
  ExpectContains("stderr", run.err, "the energy diverged");
  JoinPath(ck, b, "failed_step.bin");
  ExpectContains("stderr", run.err, ck);
  if (!FileExists(ck)) fail_msg("no failure checkpoint %s", ck);
  FreeRun(&run);
  ReadDiagnostics(b, &d);
  if ((int)d.v[d.nrows - 1][COL_STEP] != first - 1)
    fail_msg("the diagnostics end at step %g, expected %d (the last step before the divergence)",
             d.v[d.nrows - 1][COL_STEP], first - 1);
}

/* A disk that fills up during the run (a 16 KiB tmpfs) stops it at the first failed write with the file,
   the step and the system's reason (ENOSPC) named, and the diagnostics end in a whole row; so does a
   trajectory that outgrows its disk (512 KiB), with no crash. Skipped where a mount namespace cannot be
   made (not root). Then: diagnostics.csv on a full device (/dev/full) and an output directory that cannot
   be created fail at once. */
static void TestFullDisk(void **state)
{
  char        input[PATH_SIZE], dir[PATH_SIZE], out[PATH_SIZE], csv[PATH_SIZE], saved[PATH_SIZE];
  ProgramRun  run;
  struct stat sb;
  long        step;

  (void)state;
  SourcePath(input, "inputs/pendulum3d.yaml");
  CaseDirectory(dir, "full_disk");
  JoinPath(out, dir, "small_disk");
  JoinPath(csv, out, "diagnostics.csv");
  run = WaitProgram(dir, SpawnProgram(dir, 1, out, 16, "-i", input, "-mbs_t_end", "10", "-mbs_output_dir", out, NULL));
  if (run.exited && (run.status == 98 || run.status == 99)) { /* a user's machine, not CI (root) */
    fprintf(stderr,
            "test_app: full disk: SKIPPED: cannot mount a tmpfs in a mount namespace (unshare -m needs root)\n");
    FreeRun(&run);
    skip();
  }
  ExpectUserError("full disk", &run);
  ExpectContains("stderr", run.err, csv);
  ExpectContains("stderr", run.err, "failed at step ");
  ExpectContains("stderr", run.err, strerror(ENOSPC));
  step = NumberAfter(run.err, "failed at step ");
  JoinPath(saved, dir, "small_disk.saved");
  JoinPath(csv, saved, "diagnostics.csv");
  if (stat(csv, &sb) || sb.st_size > 16384) fail_msg("%s is missing or larger than the disk", csv);
  {
    char *text = ReadFile(csv), *last; /* more rows than ReadCsv takes: the last one by hand */
    if (!text || !*text || text[strlen(text) - 1] != '\n') fail_msg("%s does not end in a whole row", csv);
    text[strlen(text) - 1] = 0;
    last                   = strrchr(text, '\n');
    if (!last || strtol(last + 1, NULL, 10) + 1 != step)
      fail_msg("the last row of %s is not the step before %ld:\n%s", csv, step, last ? last + 1 : text);
    if (CountLines(csv) < 10) fail_msg("%s: only %d lines before the disk was full", csv, CountLines(csv));
    free(text);
  }
  FreeRun(&run);

  /* the trajectory (HDF5) on a small disk: stopped before HDF5 writes what does not fit (it cannot
     recover from a failed write), with the need and the free space named */
  JoinPath(out, dir, "small_disk_trajectory");
  {
    char h5[PATH_SIZE];
    JoinPath(h5, out, "trajectory.h5");
    run = WaitProgram(dir, SpawnProgram(dir, 1, out, 512, "-i", input, "-mbs_t_end", "10", "-mbs_output_dir", out,
                                        "-mbs_trajectory", "xdmf", NULL));
    ExpectUserError("full disk, trajectory", &run);
    ExpectContains("stderr", run.err, h5);
    ExpectContains("stderr", run.err, strerror(ENOSPC));
    ExpectContains("stderr", run.err, "bytes needed");
    FreeRun(&run);
  }
}

static void TestWriteErrors(void **state)
{
  char       input[PATH_SIZE], dir[PATH_SIZE], out[PATH_SIZE], csv[PATH_SIZE], file[PATH_SIZE], bad[PATH_SIZE];
  ProgramRun run;

  (void)state;
  SourcePath(input, "inputs/pendulum3d.yaml");
  CaseDirectory(dir, "write_errors");
  JoinPath(out, dir, "full");
  JoinPath(csv, out, "diagnostics.csv");
  if (mkdir(out, 0777) || symlink("/dev/full", csv)) fail_msg("cannot set up %s -> /dev/full", csv);
  run = RunProgram(dir, "-i", input, "-mbs_t_end", "0.5", "-mbs_output_dir", out, NULL);
  ExpectUserError("/dev/full", &run);
  ExpectContains("stderr", run.err, csv);
  ExpectContains("stderr", run.err, strerror(ENOSPC));
  FreeRun(&run);

  {
    /* a checkpoint path that is not a regular file (here a pipe; as root, /dev/full) is refused, not replaced */
    char fifo[PATH_SIZE];
    JoinPath(fifo, dir, "pipe.bin");
    if (mkfifo(fifo, 0666)) fail_msg("mkfifo %s: %s", fifo, strerror(errno));
    run = RunProgram(dir, "-i", input, "-mbs_t_end", "0.5", "-mbs_output_dir", dir, "-mbs_checkpoint", fifo,
                     "-mbs_checkpoint_every", "5", NULL);
    ExpectUserError("checkpoint to a pipe", &run);
    ExpectContains("stderr", run.err, "is not a regular file");
    FreeRun(&run);
    {
      struct stat sb;
      if (stat(fifo, &sb) || !S_ISFIFO(sb.st_mode)) fail_msg("%s was replaced", fifo);
    }
  }

  JoinPath(file, dir, "a_file");
  CopyFile(input, file, -1);
  JoinPath(bad, file, "out");
  run = RunProgram(dir, "-i", input, "-mbs_t_end", "0.5", "-mbs_output_dir", bad, NULL);
  ExpectUserError("output under a file", &run);
  ExpectContains("stderr", run.err, bad);
  ExpectContains("stderr", run.err, strerror(ENOTDIR));
  FreeRun(&run);
}

/* ---------------------------------------------------------------- main */

static void PrintFile(FILE *to, const char *path)
{
  char *text = ReadFile(path);

  if (text) fprintf(to, "%s\n", text);
  free(text);
}

int main(void)
{
  const size_t      nbad = sizeof(bad_runs) / sizeof(bad_runs[0]);
  struct CMUnitTest tests[sizeof(bad_runs) / sizeof(bad_runs[0]) + 40];
  const char       *tmp = getenv("TMPDIR");
  char              report[PATH_SIZE];
  size_t            n = 0;
  int               failed;

  if (snprintf(scratch, sizeof(scratch), "%s/gglmbs_test_app.XXXXXX", tmp && *tmp ? tmp : "/tmp") >=
        (int)sizeof(scratch) ||
      !mkdtemp(scratch) || chdir(scratch)) {
    perror("test_app: cannot create a temporary directory");
    return 1;
  }
  /* cmocka's report goes to an XML file, so a passing run prints nothing */
  if (snprintf(report, sizeof(report), "%s/report.xml", scratch) >= (int)sizeof(report)) return 1;
  if (setenv("OMPI_MCA_odls_base_sigkill_timeout", "3", 1)) return 1; /* InterruptCase() */
  (void)remove(report); /* cmocka writes to stderr instead of an existing file */
  if (setenv("CMOCKA_MESSAGE_OUTPUT", "XML", 1) || setenv("CMOCKA_XML_FILE", report, 1)) return 1;

  for (size_t i = 0; i < nbad; i++)
    tests[n++] = (struct CMUnitTest){bad_runs[i].file, TestBadInput, NULL, NULL, (void *)&bad_runs[i]};
  tests[n++] = (struct CMUnitTest){"no input", TestNoInput, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"missing file", TestMissingFile, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"unknown trajectory format", TestUnknownTrajectoryFormat, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"pendulum", TestPendulum, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"overrides", TestOverrides, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"not converged", TestNotConverged, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"non-finite residual", TestNonFiniteResidual, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"option errors", TestOptionErrors, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"vi-a", TestSchemeVIA, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"adapt", TestAdapt, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"help", TestHelp, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"restart chain", TestRestartChain, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"restart chain on 2 ranks", TestRestartChainParallel, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"restart heavy top vi-b", TestRestartTop, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"restart four particles rattle", TestRestartRattle, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"restart triple pendulum galerkin", TestRestartGalerkin, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"restart loads", TestRestartLoads, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"restart redundant", TestRestartRedundant, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"restart on other ranks", TestRestartOtherRanks, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"restart errors", TestRestartErrors, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"interrupt", TestInterrupt, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"hangup", TestHangup, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"interrupt on 2 ranks", TestInterruptParallel, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"failure checkpoint", TestFailureCheckpoint, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"energy divergence", TestEnergyDivergence, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"full disk", TestFullDisk, NULL, NULL, NULL};
  tests[n++] = (struct CMUnitTest){"write errors", TestWriteErrors, NULL, NULL, NULL};
  failed     = _cmocka_run_group_tests("app", tests, n, NULL, NULL);

  if (failed) { /* assertion messages are only in the report */
    PrintFile(stderr, report);
    fprintf(stderr, "test_app: outputs kept in %s\n", scratch);
  } else if (chdir("/") || nftw(scratch, RemoveEntry, 16, FTW_DEPTH | FTW_PHYS)) {
    fprintf(stderr, "test_app: cannot remove %s\n", scratch);
  }
  return failed;
}
