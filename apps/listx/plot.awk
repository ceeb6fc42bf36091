# plot.awk: a gnuplot script for one listx CSV, shaped like Myrmics Fig. 4g or 4h, one panel
# per interconnect (shm, tcp). Called by scripts/plot listx.
#   awk -F, -v fig=g|h -v out=PNG -v term='pngcairo ...' -f plot.awk FILE.csv | gnuplot
# g: time vs nodes per worker at the largest worker count, single scheduler (log time on TCP).
# h: time (log) vs workers at the node count swept over the most worker counts; antheap
#    with a single scheduler and with hierarchical schedulers.
FNR == 1 { for (i = 1; i <= NF; i++) col[$i] = i; next }
{
  net = $col["net"]; w = $col["workers"] + 0; n = $col["nodes"] + 0
  v = $col["variant"]; s = $col["schedulers"] + 0; t = $col["median_s"] + 0
  if (!(net in nets)) { nets[net] = 1; netl[++nn] = net }
  machine = $col["machine"]
  if (w > maxw[net]) maxw[net] = w
  nr++; R_net[nr] = net; R_w[nr] = w; R_n[nr] = n; R_v[nr] = v; R_s[nr] = s; R_t[nr] = t
  if (!((net, n, w) in wseen)) { wseen[net, n, w] = 1; wcount[net, n]++ }
}
function series(v, s) { return v (s > 1 ? ", hierarchical" : (v ~ /^antheap/ && fig == "h" ? ", single scheduler" : "")) }
function color(name) {
  if (name ~ /^antheap-balloc/) return name ~ /hier/ ? "#9ecae1" : "#3182bd"
  if (name ~ /^antheap/) return name ~ /hier/ ? "#74c476" : "#006d2c"
  if (name ~ /^shmem/) return "#d62728"
  if (name ~ /^mpi-rma/) return "#ff7f0e"
  return "#7f7f7f"
}
END {
  # order the panels: shm first
  for (i = 1; i <= nn; i++) if (netl[i] == "shm" && i > 1) { t0 = netl[1]; netl[1] = "shm"; netl[i] = t0 }
  for (i = 1; i <= nn; i++) {
    net = netl[i]; best = 0
    for (k in wcount) { split(k, p, SUBSEP); if (p[1] == net && (wcount[k] > best || (wcount[k] == best && p[2] + 0 > bestn[net]))) { best = wcount[k]; bestn[net] = p[2] + 0 } }
  }
  gsub(/'/, "", machine)
  print "set terminal " term; print "set output '" out "'"
  printf "set multiplot layout 1,%d title '%s'\n", nn, (fig == "g" ? "(g) list exchange, varying nodes per worker" : "(h) list exchange, varying workers") " on " machine
  print "set key top left box opaque font ',9'"; print "set grid lc rgb '#dddddd'"
  print "set ylabel 'Execution time (seconds)'"
  for (i = 1; i <= nn; i++) {
    net = netl[i]; ns = 0; delete sname; delete sidx
    # collect the panel's points per series
    for (r = 1; r <= nr; r++) {
      if (R_net[r] != net) continue
      if (fig == "g" && (R_w[r] != maxw[net] || R_s[r] > 1)) continue
      if (fig == "h" && R_n[r] != bestn[net]) continue
      name = series(R_v[r], R_s[r])
      if (!(name in sidx)) { sidx[name] = ++ns; sname[ns] = name; np[ns] = 0 }
      j = sidx[name]; x = fig == "g" ? R_n[r] : R_w[r]
      px[j, ++np[j]] = x; py[j, np[j]] = R_t[r]
    }
    label = net == "tcp" ? "TCP over loopback (cluster-like)" : "shared memory (Open MPI defaults)"
    if (fig == "g") {
      printf "set title '%s, %d workers'\n", label, maxw[net]
      print "set xlabel 'Nodes per worker (256 B)'; set logscale x 2"
      # TCP: the node-by-node baselines are orders of magnitude slower; a log scale shows all
      print (net == "tcp" ? "set logscale y; set yrange [*:*]" : "unset logscale y; set yrange [0:*]")
      print "set format x '%.0s%c'"
    } else {
      printf "set title '%s, %d nodes per worker'\n", label, bestn[net]
      print "set xlabel 'Workers'; set logscale x 2; set logscale y; set yrange [*:*]; set format x '%g'"
    }
    for (j = 1; j <= ns; j++) {
      # sort each series by x
      for (a = 2; a <= np[j]; a++) { xx = px[j, a]; yy = py[j, a]; for (b = a - 1; b >= 1 && px[j, b] > xx; b--) { px[j, b + 1] = px[j, b]; py[j, b + 1] = py[j, b] } px[j, b + 1] = xx; py[j, b + 1] = yy }
      printf "$p%ds%d << EOD\n", i, j; for (a = 1; a <= np[j]; a++) print px[j, a], py[j, a]; print "EOD"
    }
    printf "plot "
    for (j = 1; j <= ns; j++) printf "%s$p%ds%d using 1:2 with linespoints lw 2 pt 7 ps 0.8 lc rgb '%s' title '%s'", (j > 1 ? ", " : ""), i, j, color(sname[j]), sname[j]
    print ""
    for (j = 1; j <= ns; j++) for (a = 1; a <= np[j]; a++) { delete px[j, a]; delete py[j, a] }
  }
  print "unset multiplot"
}
