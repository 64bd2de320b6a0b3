#!/bin/bash
# Run OpenSM on an ibsim fabric and ask saquery for PathRecords between every ordered pair of
# nodes, once per option set. Usage (in a network namespace of its own): run.sh DIR OPTSET...
# Options in an OPTSET are joined with '+'; `none` means no option. DIR holds net, qos-policy.conf, partitions.conf, opensm.conf. Output on stdout:
#   ## lfts, ## ibnetdiscover, ## lids: dump_lfts, ibnetdiscover and name->LID, then
#   == <src> <dst> <opts>   then saquery's sl/mtu/rate/pkt_life/pkey lines, or NONE.
set -u
D=$1; shift
P=/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so
cd "$D"; mkdir -p cache
export OSM_CACHE_DIR=$D/cache OSM_TMP_DIR=$D/cache
IBSIM=; OSM=
stop() {
  [ -n "$OSM" ] && { kill $OSM 2>/dev/null; sleep 0.5; kill -9 $OSM 2>/dev/null; }
  [ -n "$IBSIM" ] && kill $IBSIM 2>/dev/null
}
trap stop EXIT
ibsim -s -n "$D/net" > ibsim.out 2>&1 & IBSIM=$!
sleep 1
LD_PRELOAD=$P opensm -F "$D/opensm.conf" -f "$D/osm.log" -e -D 0x0f -s 0 > opensm.out 2>&1 & OSM=$!
FIRST=$(grep -m1 -E '^(Switch|Hca|Ca)' net | sed 's/.*"\(.*\)".*/\1/')
for i in $(seq 1 40); do
  grep -q "SUBNET UP" osm.log 2>/dev/null && break
  sleep 0.5
done
sleep 1
SIM_HOST=$FIRST LD_PRELOAD=$P ibnetdiscover > disc.txt 2>/dev/null
# The routes OpenSM programmed, as dump_lfts prints them (ibroute on every switch).
SIM_HOST=$FIRST LD_PRELOAD=$P dump_lfts > lfts.txt 2>/dev/null
# name -> lid: switch headers carry it, CAs on their first port line
awk '
/^Switch/ { match($0, /# "[^"]*"/); d=substr($0, RSTART+3, RLENGTH-4); n=split($0,a," "); for(i=1;i<=n;i++) if(a[i]=="lid"){print d, a[i+1]; break} }
/^(Ca|Hca|Rt)/ { match($0, /# "[^"]*"/); d=substr($0, RSTART+3, RLENGTH-4); want=1; next }
/^\[/ && want { n=split($0,a," "); for(i=1;i<=n;i++) if(a[i]=="lid"){print d, a[i+1]; break}; want=0 }
' disc.txt | sort -u > lids.txt
echo "## lfts"; cat lfts.txt
echo "## ibnetdiscover"; cat disc.txt
echo "## lids"; cat lids.txt
while read -r S SL; do
  while read -r T TL; do
    for O in "$@"; do
      echo "== $S $T $O"
      # shellcheck disable=SC2086
      A=${O//+/ }; [ "$O" = none ] && A=
      OUT=$(SIM_HOST=$S LD_PRELOAD=$P saquery PR --slid $SL --dlid $TL $A 2>/dev/null | grep -E '^\s+(sl|mtu|rate|pkt_life|pkey)\.')
      if [ -n "$OUT" ]; then echo "$OUT"; else echo NONE; fi
    done
  done < lids.txt
done < lids.txt
echo "## end"
