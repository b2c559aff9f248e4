# SPDX-License-Identifier: GPL-2.0
# vm/system/compare's plot: gnuplot -e "dat='F'; out='F.png'" compare.gp
# dat: ARM BOUND% IDLE-EXITS/S ASYNCIO-P99-MS, one line per arm and bound.
set terminal pngcairo size 900,560 font ",11"
set output out
set title "Idle exits against lateness: the shim, timer slack, both (medians)"
set xlabel "asyncio's p99 lateness (ms)"
set ylabel "exits from idle per second, whole system"
set key top right
set grid
set yrange [0:*]
set xrange [0:*]
plot dat using (strcol(1) eq "none" ? $4 : 1/0):3 with points pt 7 ps 2 title "no shim, no slack", \
     dat using (strcol(1) eq "shim" ? $4 : 1/0):3 with linespoints pt 5 title "shim, bound P", \
     dat using (strcol(1) eq "slack" ? $4 : 1/0):3 with linespoints pt 9 title "TimerSlackNSec = P x 100 ms", \
     dat using (strcol(1) eq "both" ? $4 : 1/0):3 with linespoints pt 13 title "both", \
     dat using (strcol(1) eq "none" ? 1/0 : $4):3:(sprintf("%s%%", strcol(2))) with labels offset 1,1 notitle
