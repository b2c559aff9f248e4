# SPDX-License-Identifier: GPL-2.0
# bench/plot.gp: gnuplot -e "dir='DATA'; out='PNG'; title='...'; target=US;
#                 lates='10ms 100ms ...'; tmodes='strict slack1ms ...'" bench/plot.gp
# Latency distributions per mode (CDFs pooled over repetitions) and the
# idle wake-ups each mode adds; with tmodes (the tolerance variants of
# issue 8 and what they are compared to), a third row for them.
if (!exists("tmodes")) tmodes = ''
rows = (tmodes eq '') ? 2 : 3
set terminal pngcairo size 1800,(rows * 525) font "sans,10"
set output out
set multiplot layout rows,3 title title font "sans,13"

set logscale x
set xlabel "microseconds after the deadline (log)"
set ylabel "percentile"
set yrange [0:100]
set grid
set key bottom right
set format x "10^{%T}"

q(t, m) = sprintf("%s/q_%s_%s.dat", dir, t, m)
cdf(t, name) = sprintf("plot '%s' u ($1>1?$1:1):2 w lp pt 7 ps 0.5 lc rgb '#1f77b4' t 'native', '%s' u ($1>1?$1:1):2 w lp pt 5 ps 0.5 lc rgb '#d62728' t 'strict', '%s' u ($1>1?$1:1):2 w lp pt 9 ps 0.5 lc rgb '#2ca02c' t 'deferrable'", q(t,'native'), q(t,'strict'), q(t,'deferrable'))

set title "idle guest, one-shot"
eval cdf('lat.idle.oneshot', '')
set title "idle guest, periodic"
eval cdf('lat.idle.periodic', '')
set title "busy guest (spinner per CPU), one-shot"
eval cdf('lat.busy.oneshot', '')
set title "busy guest (spinner per CPU), periodic"
eval cdf('lat.busy.periodic', '')

set title "lateness on a busy CPU: deferrable by interval, strict (dashed) beside them"
set arrow 1 from target, graph 0 to target, graph 1 nohead dt 2 lc rgb 'black'
set label 1 "target" at target, graph 0.05 offset 0.5,0
lf(i) = sprintf("%s/q_late.%s_deferrable.dat", dir, i)
ls(i) = sprintf("%s/q_late.%s_strict.dat", dir, i)
plot for [i in lates] lf(i) u ($1>1?$1:1):2 w lp ps 0.5 t i, \
     for [i in lates] ls(i) u ($1>1?$1:1):2 w l dt 2 lc rgb 'gray40' t (i eq word(lates, 1) ? 'strict' : '')
unset arrow 1
unset label 1

set title "idle wake-ups added (LOC/s above baseline, median)"
unset logscale x
set format x "%g"
set logscale y
set format y "10^{%T}"
set yrange [0.1:*]
set xlabel "timers x period"
set ylabel "LOC interrupts per second"
set style data histogram
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key top left
plot dir.'/wake.dat' u 2:xtic(1) lc rgb '#1f77b4' t 'native', '' u 3 lc rgb '#d62728' t 'strict', '' u 4 lc rgb '#2ca02c' t 'deferrable'

if (tmodes ne '') {
	# strict, its slacks, deferrable, its bounds (bench/run's order)
	tcol = "#d62728 #ff7f0e #8c564b #2ca02c #17becf #9467bd #7f7f7f #bcbd22"
	set title "tolerance: idle wake-ups added (LOC/s above baseline, median)"
	plot for [i=1:words(tmodes)] dir.'/wake_tol.dat' u (column(i+1)):xtic(1) lc rgb word(tcol, i) t word(tmodes, i)

	unset style data
	unset style fill
	set style data linespoints
	set logscale x
	set format x "10^{%T}"
	unset logscale y
	set format y "%g"
	set yrange [0:100]
	set ylabel "percentile"
	set key bottom right
	set xlabel "microseconds after the deadline (log)"
	set title "tolerance: idle guest, 10 timers x 10 ms, lateness"
	plot for [i=1:words(tmodes)] sprintf("%s/q_wake.late.N10_10ms_%s.dat", dir, word(tmodes, i)) \
		u ($1>1?$1:1):2 w lp ps 0.5 lc rgb word(tcol, i) t word(tmodes, i)
	set title "tolerance: busy CPU, 100 ms timers, lateness"
	plot for [i=1:words(tmodes)] sprintf("%s/q_late.100ms_%s.dat", dir, word(tmodes, i)) \
		u ($1>1?$1:1):2 w lp ps 0.5 lc rgb word(tcol, i) t word(tmodes, i)
}
unset multiplot
