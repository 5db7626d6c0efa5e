#!/bin/sh
# Counts what a pebblesim trace does, with jq alone: lines per operation,
# and the elementary moves they stand for (an integer coordinate is one
# value, an array its length, {"lo":L,"hi":H} H - L values; a fused mac
# adds a compute and a delete per (row, monomial)).
#
#   examples/count-ops.sh examples/tiny.jsonl
#
# For tiny.jsonl it prints loads 6 and saves 2, as `pebblesim validate` does.
set -eu
trace=${1:?usage: count-ops.sh TRACE.jsonl}
jq -s '
  def size: if type == "number" then 1
            elif type == "array" then length
            else .hi - .lo end;
  def coords: to_entries | map(select(.key | IN("op","kind","into","fuse") | not));
  def moves: (coords | map(.value | size)) as $s
             | if .fuse then ($s[0] * $s[1] * ($s[2] + (if $s[2] > 0 then 2 else 0 end)))
               else ($s | reduce .[] as $x (1; . * $x)) end;
  .[1:] | map(select(.op != "end"))
  | group_by(.op)
  | map({op: .[0].op, lines: length, moves: (map(moves) | add)})
' "$trace"
