# scripts/machine-name.sh: sourced by scripts/plot and scripts/bench-threads.
# machine_name CSV: a short name of the machine a CSV was measured on, from the machine column
# of its first row ("h100-box: vm (Intel(R) Xeon(R) Processor; 16 cpus)") and the file's name:
# -h100, -h200, -x2 and -x4 name the lent GPU box (the column's "h100-box:" was scripts/device-cpu's
# default label, whichever box ran it). "16-core H100 box (Intel Xeon)", "2-core VM (AMD EPYC)".
# Empty when the CSV has no machine column and its name no box.
machine_name() {
  awk -F, -v file="$(basename "$1" .csv)" '
    NR == 1 { for (i = 1; i <= NF; i++) if ($i == "machine") c = i; if (!c) exit; next }
    NR == 2 { m = $c; exit }
    END {
      box = ""; lm = tolower(m)
      if (file ~ /(^|-)x2(-|$)/) box = "H200 x2 box"
      else if (file ~ /(^|-)x4(-|$)/) box = "H200 x4 box"
      else if (file ~ /(^|-)h200(-|$)/) box = "H200 box"
      else if (file ~ /(^|-)h100(-|$)/) box = "H100 box"
      else if (lm ~ /^h100[ -]box:/) box = "H100 box"
      else if (lm ~ /^h200[ -]box:/) box = "H200 box"
      sub(/^[^(:]*: */, "", m)                 # "h100-box: " and such
      kind = m; sub(/ *\(.*$/, "", kind)       # vm, or a host name
      inner = m
      if (sub(/^[^(]*\(/, "", inner)) sub(/\)$/, "", inner); else inner = ""
      n = split(inner, part, /; */); cpu = part[1]; cores = ""
      for (i = 2; i <= n; i++) if (part[i] ~ /^[0-9]+ cpus?$/) cores = part[i] + 0
      gsub(/\((R|TM|r|tm)\)/, "", cpu); sub(/ (CPU|Processor).*$/, "", cpu); gsub(/  +/, " ", cpu)
      what = box != "" ? box : (kind == "vm" ? "VM" : (kind != "" ? kind : ""))
      if (what == "") exit
      printf "%s%s%s\n", (cores != "" ? cores "-core " : ""), what, (cpu != "" ? " (" cpu ")" : "")
    }' "$1"
}
