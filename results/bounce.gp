set terminal pngcairo size 1200,900 enhanced font 'Sans,10'
set output 'results/bounce.png'
set datafile separator ','
set multiplot layout 2,2
set xlabel 'q0 (m)'
set key top left font ',8'
unset logscale y
set format y '%g'
set ylabel 'dL/dq0'
set yrange [-3.4375410155842996:3.4375410155842996]
set title "jump contact (solimp 0.99 0.99 0.001 0.5 2): dL/dq0, L = |q_T - 1| (clipped)"
plot 'results/bounce.csv' u 2:(strcol(1) eq 'jump' ? $4 : NaN) w l lw 3 lc rgb 'black' t 'ground truth (FD)', '' u 2:(strcol(1) eq 'jump' ? $6 : NaN) w lp pt 7 ps 0.5 lc rgb '#d62728' t 'euler h=0.1', '' u 2:(strcol(1) eq 'jump' ? $7 : NaN) w lp pt 5 ps 0.5 lc rgb '#1f77b4' t 'euler h=1e-4', '' u 2:(strcol(1) eq 'jump' ? $8 : NaN) w lp pt 13 ps 0.6 lc rgb '#ff7f0e' t 'tsit5 default', '' u 2:(strcol(1) eq 'jump' ? $9 : NaN) w lp pt 9 ps 0.8 lc rgb '#2ca02c' t 'tsit5 1e-8', '' u 2:(strcol(1) eq 'jump' ? $10 : NaN) w lp pt 11 ps 0.8 lc rgb '#9467bd' t 'tsit5 -eg'
set logscale y
set autoscale y
set format y '10^{%L}'
set ylabel 'relative error'
set title "jump contact: relative gradient error"
plot 'results/bounce.csv' u 2:(strcol(1) eq 'jump' ? $11 : NaN) w lp pt 7 ps 0.5 lc rgb '#d62728' t 'euler h=0.1', '' u 2:(strcol(1) eq 'jump' ? $12 : NaN) w lp pt 5 ps 0.5 lc rgb '#1f77b4' t 'euler h=1e-4', '' u 2:(strcol(1) eq 'jump' ? $13 : NaN) w lp pt 13 ps 0.6 lc rgb '#ff7f0e' t 'tsit5 default', '' u 2:(strcol(1) eq 'jump' ? $14 : NaN) w lp pt 9 ps 0.8 lc rgb '#2ca02c' t 'tsit5 1e-8', '' u 2:(strcol(1) eq 'jump' ? $15 : NaN) w lp pt 11 ps 0.8 lc rgb '#9467bd' t 'tsit5 -eg'
unset logscale y
set format y '%g'
set ylabel 'dL/dq0'
set yrange [-3.4570408675049786:3.4570408675049786]
set title "continuous contact (solimp 0 0.99 0.01 0.5 2): dL/dq0, L = |q_T - 1| (clipped)"
plot 'results/bounce.csv' u 2:(strcol(1) eq 'continuous' ? $4 : NaN) w l lw 3 lc rgb 'black' t 'ground truth (FD)', '' u 2:(strcol(1) eq 'continuous' ? $6 : NaN) w lp pt 7 ps 0.5 lc rgb '#d62728' t 'euler h=0.1', '' u 2:(strcol(1) eq 'continuous' ? $7 : NaN) w lp pt 5 ps 0.5 lc rgb '#1f77b4' t 'euler h=1e-4', '' u 2:(strcol(1) eq 'continuous' ? $8 : NaN) w lp pt 13 ps 0.6 lc rgb '#ff7f0e' t 'tsit5 default', '' u 2:(strcol(1) eq 'continuous' ? $9 : NaN) w lp pt 9 ps 0.8 lc rgb '#2ca02c' t 'tsit5 1e-8', '' u 2:(strcol(1) eq 'continuous' ? $10 : NaN) w lp pt 11 ps 0.8 lc rgb '#9467bd' t 'tsit5 -eg'
set logscale y
set autoscale y
set format y '10^{%L}'
set ylabel 'relative error'
set title "continuous contact: relative gradient error"
plot 'results/bounce.csv' u 2:(strcol(1) eq 'continuous' ? $11 : NaN) w lp pt 7 ps 0.5 lc rgb '#d62728' t 'euler h=0.1', '' u 2:(strcol(1) eq 'continuous' ? $12 : NaN) w lp pt 5 ps 0.5 lc rgb '#1f77b4' t 'euler h=1e-4', '' u 2:(strcol(1) eq 'continuous' ? $13 : NaN) w lp pt 13 ps 0.6 lc rgb '#ff7f0e' t 'tsit5 default', '' u 2:(strcol(1) eq 'continuous' ? $14 : NaN) w lp pt 9 ps 0.8 lc rgb '#2ca02c' t 'tsit5 1e-8', '' u 2:(strcol(1) eq 'continuous' ? $15 : NaN) w lp pt 11 ps 0.8 lc rgb '#9467bd' t 'tsit5 -eg'
unset multiplot
