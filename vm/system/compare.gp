# SPDX-License-Identifier: GPL-2.0
# vm/system/compare's plot: gnuplot -e "dat='F'; out='F.png'" compare.gp
# dat: ARM BOUND% IDLE-EXITS/S ASYNCIO-P99-MS USER-WAKEUPS/S, one line
# per arm and bound (medians).  Left: every exit from idle, the whole
# system; right: those user space's timers and timeouts caused.  x: the
# lateness the load's asyncio service saw, its p99.  The bound labels the
# slack points above and the shim's below (both's sit beside the shim's).
set terminal pngcairo size 1100,560 font ",11"
set output out
set multiplot layout 1,2 title "The shim, timer slack and both at bound P: wake-ups against lateness (medians)"
set xlabel "asyncio's p99 lateness (ms)"
set grid
set xrange [0:*]
set yrange [0:*]
set key bottom right box opaque
set ylabel "exits from idle per second, whole system"
plot dat using (strcol(1) eq "none" ? $4 : 1/0):3 with points pt 7 ps 2 title "no shim, no slack", \
     dat using (strcol(1) eq "shim" ? $4 : 1/0):3 with linespoints pt 5 ps 1.5 title "shim, bound P", \
     dat using (strcol(1) eq "slack" ? $4 : 1/0):3 with linespoints pt 9 ps 1.5 title "TimerSlackNSec = P x 100 ms", \
     dat using (strcol(1) eq "both" ? $4 : 1/0):3 with linespoints pt 13 ps 1.5 title "both", \
     dat using (strcol(1) eq "slack" ? $4 : 1/0):3:(sprintf("%s%%", strcol(2))) with labels offset 0,1.2 notitle, \
     dat using (strcol(1) eq "shim" ? $4 : 1/0):3:(sprintf("%s%%", strcol(2))) with labels offset 0,-1.2 notitle
set ylabel "user-space timer and timeout wake-ups per second"
set key bottom right box opaque
plot dat using (strcol(1) eq "none" ? $4 : 1/0):5 with points pt 7 ps 2 title "no shim, no slack", \
     dat using (strcol(1) eq "shim" ? $4 : 1/0):5 with linespoints pt 5 ps 1.5 title "shim, bound P", \
     dat using (strcol(1) eq "slack" ? $4 : 1/0):5 with linespoints pt 9 ps 1.5 title "TimerSlackNSec = P x 100 ms", \
     dat using (strcol(1) eq "both" ? $4 : 1/0):5 with linespoints pt 13 ps 1.5 title "both", \
     dat using (strcol(1) eq "slack" ? $4 : 1/0):5:(sprintf("%s%%", strcol(2))) with labels offset 0,1.2 notitle, \
     dat using (strcol(1) eq "shim" ? $4 : 1/0):5:(sprintf("%s%%", strcol(2))) with labels offset 0,-1.2 notitle
unset multiplot
