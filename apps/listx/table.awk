# table.awk: the comparison table of listx CSVs (columns by header name). For every
# (machine, net, workers, nodes), each variant's median time and its ratio to antheap's:
#   x_antheap  time / antheap's (one sys_alloc per node, single scheduler): above 1 means
#              antheap is that many times faster
#   x_best     time / the best antheap row of that point (any allocation, any layout)
#   build_s, exch_s  the medians of the two phases (build the list; the exchange stages)
#   build_x_balloc   an antheap row's build time / antheap-balloc's build time with the same
#              scheduler layout (the allocation cache's goal: <= 1.5)
# Hybrid rows (antheap-threads, a threads column above 1) are named "RANKSxTHREADS" after the
# variant and sit with the single-threaded rows of the same worker count, so that x_antheap
# is the hybrid's time over 32 single-threaded ranks' at 2 x 16 (issue 34's goal: <= 1).
# Usage: awk -F, -f table.awk FILE.csv...
FNR == 1 { delete col; for (i = 1; i <= NF; i++) col[$i] = i; next }
{
  key = $col["machine"] SUBSEP $col["net"] SUBSEP sprintf("%06d", $col["workers"]) SUBSEP \
        sprintf("%09d", $col["nodes"])
  v = $col["variant"]; s = $col["schedulers"] + 0
  th = ("threads" in col) ? $col["threads"] + 0 : 1
  name = v (th > 1 || v ~ /-threads/ ? sprintf(" %dx%d", $col["ranks"] - s, th) : "") \
         (s > 1 ? sprintf(" (%d sched)", s) : "")
  t = $col["median_s"] + 0
  n = ++rows[key]
  rname[key, n] = name; rtime[key, n] = t; rmin[key, n] = $col["min_s"] + 0
  rok[key, n] = $col["verified"]
  rbuild[key, n] = $col["build_median_s"] + 0; rexch[key, n] = $col["exchange_median_s"] + 0
  rvar[key, n] = v; rsched[key, n] = s
  if (v == "antheap-balloc") balloc_build[key, s] = $col["build_median_s"] + 0
  if (!(key in seen)) { seen[key] = 1; keys[++nkeys] = key }
  if (v == "antheap" && s <= 1) ref[key] = t
  if (v ~ /^antheap/ && (!(key in best) || t < best[key])) best[key] = t
}
END {
  # keys in order: machine, net, workers, nodes (insertion sort: the tables are small)
  for (i = 2; i <= nkeys; i++) {
    k = keys[i]
    for (j = i - 1; j >= 1 && keys[j] > k; j--) keys[j + 1] = keys[j]
    keys[j + 1] = k
  }
  last = ""
  for (i = 1; i <= nkeys; i++) {
    k = keys[i]; split(k, p, SUBSEP)
    if (p[1] != last) {
      printf "\nlistx on %s\n", p[1]; last = p[1]
      printf "%-4s %7s %8s  %-30s %10s %10s %9s %7s %9s %9s %14s %s\n", "net", "workers",
             "nodes", "variant", "median_s", "min_s", "x_antheap", "x_best", "build_s", "exch_s",
             "build_x_balloc", "verified"
    }
    for (r = 1; r <= rows[k]; r++) {
      xa = (k in ref) && ref[k] > 0 ? sprintf("%.2f", rtime[k, r] / ref[k]) : "-"
      xb = (k in best) && best[k] > 0 ? sprintf("%.2f", rtime[k, r] / best[k]) : "-"
      bb = "-"
      if (rvar[k, r] ~ /^antheap/ && ((k, rsched[k, r]) in balloc_build) && balloc_build[k, rsched[k, r]] > 0)
        bb = sprintf("%.2f", rbuild[k, r] / balloc_build[k, rsched[k, r]])
      printf "%-4s %7d %8d  %-30s %10.4f %10.4f %9s %7s %9.4f %9.4f %14s %s\n", p[2], p[3] + 0,
             p[4] + 0, rname[k, r], rtime[k, r], rmin[k, r], xa, xb, rbuild[k, r], rexch[k, r],
             bb, rok[k, r]
    }
  }
}
