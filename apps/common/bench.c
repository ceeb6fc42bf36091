/* bench.c: timing, medians, machine name, the printed/CSV result table, and --help spotting. */
#include "bench.h"

#include <errno.h>
#include <libgen.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

double bench_now_ns(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

double bench_median(double *v, size_t n) {
  qsort(v, n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

const char *bench_machine(void) {
  static char name[256];
  if (name[0]) return name;
  char host[64] = "unknown", cpu[160] = "unknown cpu";
  gethostname(host, sizeof host - 1);
  FILE *f = fopen("/proc/cpuinfo", "r");
  char line[256];
  while (f && fgets(line, sizeof line, f)) {
    char *colon = strchr(line, ':');
    if (strncmp(line, "model name", 10) == 0 && colon) {
      snprintf(cpu, sizeof cpu, "%s", colon + 2);
      cpu[strcspn(cpu, "\n")] = 0;
      break;
    }
  }
  if (f) fclose(f);
  long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
  snprintf(name, sizeof name, "%s (%s; %ld cpus)", host, cpu, ncpu);
  for (char *c = name; *c; c++)
    if (*c == ',') *c = ';'; /* keep the CSV simple */
  return name;
}

struct bench_table {
  const char *title;
  int ncols;
  char **cells; /* rows * ncols */
  int rows, cap;
  const char *const *cols;
};

bench_table *bench_table_new(const char *title, int ncols, const char *const *cols) {
  bench_table *t = calloc(1, sizeof *t);
  t->title = title;
  t->ncols = ncols;
  t->cols = cols;
  return t;
}

void bench_table_row(bench_table *t, const char *const *cells) {
  if (t->rows == t->cap) {
    t->cap = t->cap ? 2 * t->cap : 16;
    t->cells = realloc(t->cells, (size_t)t->cap * (size_t)t->ncols * sizeof *t->cells);
  }
  for (int c = 0; c < t->ncols; c++) t->cells[t->rows * t->ncols + c] = strdup(cells[c]);
  t->rows++;
}

static void make_parent_dir(const char *path) {
  char *copy = strdup(path), *dir = dirname(copy);
  mkdir(dir, 0777);
  free(copy);
}

int bench_table_finish(bench_table *t, const char *csv_path) {
  int width[32] = {0};
  for (int c = 0; c < t->ncols && c < 32; c++) {
    width[c] = (int)strlen(t->cols[c]);
    for (int r = 0; r < t->rows; r++) {
      int w = (int)strlen(t->cells[r * t->ncols + c]);
      if (w > width[c]) width[c] = w;
    }
  }
  printf("\n%s\n", t->title);
  for (int c = 0; c < t->ncols; c++) printf("%*s  ", width[c], t->cols[c]);
  printf("\n");
  for (int r = 0; r < t->rows; r++) {
    for (int c = 0; c < t->ncols; c++) printf("%*s  ", width[c], t->cells[r * t->ncols + c]);
    printf("\n");
  }
  int rc = 0;
  if (csv_path) {
    make_parent_dir(csv_path);
    FILE *f = fopen(csv_path, "w");
    if (!f) {
      fprintf(stderr, "bench: cannot write %s: %s\n", csv_path, strerror(errno));
      rc = -1;
    } else {
      fprintf(f, "machine");
      for (int c = 0; c < t->ncols; c++) fprintf(f, ",%s", t->cols[c]);
      fprintf(f, "\n");
      for (int r = 0; r < t->rows; r++) {
        fprintf(f, "%s", bench_machine());
        for (int c = 0; c < t->ncols; c++) fprintf(f, ",%s", t->cells[r * t->ncols + c]);
        fprintf(f, "\n");
      }
      fclose(f);
      printf("(written to %s; machine: %s)\n", csv_path, bench_machine());
    }
  }
  for (int i = 0; i < t->rows * t->ncols; i++) free(t->cells[i]);
  free(t->cells);
  free(t);
  return rc;
}

int bench_row_append(const char *prog, const char *title, int ncols, const char *const *cols,
                     const char *const *cells, const char *csv_path) {
  bench_table *t = bench_table_new(title, ncols, cols);
  bench_table_row(t, cells);
  bench_table_finish(t, NULL);
  if (!csv_path) return 0;
  struct stat st;
  int fresh = stat(csv_path, &st) != 0 || st.st_size == 0;
  FILE *f = fopen(csv_path, "a");
  if (!f) {
    fprintf(stderr, "%s: error: cannot append to %s: %s\n", prog, csv_path, strerror(errno));
    return -1;
  }
  if (fresh) {
    fprintf(f, "machine");
    for (int c = 0; c < ncols; c++) fprintf(f, ",%s", cols[c]);
    fprintf(f, "\n");
  }
  fprintf(f, "%s", bench_machine());
  for (int c = 0; c < ncols; c++) fprintf(f, ",%s", cells[c]);
  fprintf(f, "\n");
  printf("(appended to %s)\n", csv_path);
  return fclose(f) ? -1 : 0;
}

int bench_wants_help(int argc, char **argv) {
  for (int i = 1; i < argc && strcmp(argv[i], "--"); i++)
    if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) return 1;
  return 0;
}

double bench_runq_wait_ns(void) {
  FILE *f = fopen("/proc/thread-self/schedstat", "r");
  unsigned long long run, wait;
  int ok = f && fscanf(f, "%llu %llu", &run, &wait) == 2;
  if (f) fclose(f);
  return ok ? (double)wait : -1;
}
