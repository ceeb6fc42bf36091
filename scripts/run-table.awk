# scripts/run-table.awk: the table scripts/run prints from its listx CSV (one row per run: the
# net column says the round). Per variant: the median over rounds of each run's median time,
# the fastest round, the ratio to antheap's, a verdict that does not flip with noise (the
# middle halves of the rounds compared), and in how many rounds an antheap variant beat
# every baseline; then one line per column saying what it is.
# Usage: awk -F, -v rounds=R [-v md=1] -f run-table.awk build/listx-run.csv
FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
  v = $col["variant"]; t = $col["median_s"] + 0; r = $col["net"]
  n = ++count[v]; times[v, n] = t
  if (!(v in seen)) { seen[v] = 1; order[++nv] = v }
  if (v ~ /^antheap/) { if (!(r in ours) || t < ours[r]) ours[r] = t }
  else if (!(r in theirs) || t < theirs[r]) theirs[r] = t
  if ($col["verified"] != "yes") bad[v] = 1
  workers = $col["workers"]; nodes = $col["nodes"]; machine = $col["machine"]
}
function median(v,    n, i, j, a, x) {
  n = count[v]
  for (i = 1; i <= n; i++) a[i] = times[v, i]
  for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
}
# The q-th quartile (1 or 3) of v's times, by rank (5 rounds: the 2nd and 4th).
function quart(v, q,    n, i, j, a, x, k) {
  n = count[v]
  for (i = 1; i <= n; i++) a[i] = times[v, i]
  for (i = 2; i <= n; i++) { x = a[i]; for (j = i - 1; j >= 1 && a[j] > x; j--) a[j + 1] = a[j]; a[j + 1] = x }
  k = int((n + 1) * q / 4 + 0.5); if (k < 1) k = 1; if (k > n) k = n
  return a[k]
}
# How v compares with antheap: its middle half of rounds above, below, or overlapping antheap's.
function verdict(v) {
  if (v == "antheap" || !("antheap" in seen)) return "-"
  if (quart(v, 1) > quart("antheap", 3)) return "slower"
  if (quart(v, 3) < quart("antheap", 1)) return "faster"
  return "same (noise)"
}
function fastest(v,    i, m) {
  m = times[v, 1]
  for (i = 2; i <= count[v]; i++) if (times[v, i] < m) m = times[v, i]
  return m
}
END {
  if (!nv) { print "scripts/run: no run finished (see the messages above)"; exit 1 }
  ref = ("antheap" in seen) ? median("antheap") : 0
  if (md) { markdown(); exit 0 }
  printf "\nlist exchange on %s: %d workers, %d nodes of 256 B each, %d rounds\n", machine, workers, nodes, rounds
  printf "%-16s %10s %10s %10s %-14s %9s\n", "variant", "median_s", "fastest_s", "x_antheap", "vs_antheap", "verified"
  for (i = 1; i <= nv; i++) {
    v = order[i]; m = median(v)
    x = (ref > 0) ? sprintf("%.2f", m / ref) : "-"
    printf "%-16s %10.4f %10.4f %10s %-14s %9s\n", v, m, fastest(v), x, verdict(v), ((v in bad) ? "NO" : "yes")
  }
  won = 0; total = 0
  for (r in ours) if (r in theirs) { total++; if (ours[r] < theirs[r]) won++ }
  print ""
  print "variant    antheap: one sys_alloc per node in a region, the region moved with sys_send/sys_recv;"
  print "           antheap-balloc: the same, nodes allocated 4,096 at a time (sys_balloc); mpi-rma:"
  print "           MPI-3 one-sided gets of the partner's list (MPI_Win); mpi-pack: the list marshalled"
  print "           into an MPI message and rebuilt; shmem: OpenSHMEM gets from the symmetric heap"
  print "median_s   the median over the rounds of each run's median of 3 repetitions (build + exchange)"
  print "fastest_s  the fastest run's median over the rounds"
  print "x_antheap  median_s / antheap's median_s: above 1, that variant is that many times slower"
  print "vs_antheap slower/faster when the middle half of its rounds lies wholly above/below antheap's;"
  print "           same (noise) when they overlap: this machine cannot tell the two apart"
  print "verified   every worker found its own list changed exactly once by each partner"
  if (total) printf "an antheap variant was the fastest in %d of %d rounds\n", won, total
}

# -v md=1: the same table in markdown, for scripts/results (README.md).
function markdown(    i, v, m, won, total, r) {
  print "| variant | median (s) | fastest (s) | x antheap | vs antheap |"
  print "|---|---:|---:|---:|---|"
  for (i = 1; i <= nv; i++) {
    v = order[i]; m = median(v)
    printf "| %s | %.4f | %.4f | %.2f | %s |\n", v, m, fastest(v), m / ref, verdict(v)
  }
  for (r in ours) if (r in theirs) { total++; if (ours[r] < theirs[r]) won++ }
  printf "\nAn antheap variant was the fastest in %d of %d rounds.\n", won, total
}
