set terminal pngcairo size 1300,550 enhanced font 'Sans,10'
set output 'results/tolerance_eg.png'
set datafile separator ','
set logscale xy
set format y '10^{%L}'
set ylabel 'median relative error of dL/dv_z'
set key top right font ',9'
set grid
set multiplot layout 1,2
set xlabel 'dynamics evaluations per control step'
set title 'cube toss: gradient error vs evaluations (labels: rtol)'
plot 'results/tolerance_eg.csv' u 7:(strcol(2) eq 'tsit5' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#98df8a' t 'tsit5', 'results/tolerance_eg.csv' u 7:(strcol(2) eq 'dopri5' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#aec7e8' t 'dopri5', 'results/tolerance_eg.csv' u 7:(strcol(2) eq 'bosh3' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#9edae5' t 'bosh3', 'results/tolerance_eg.csv' u 7:(strcol(2) eq 'tsit5-eg' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#2ca02c' t 'tsit5-eg', '' u 7:(strcol(2) eq 'tsit5-eg' ? $5 : NaN):(sprintf('%.0e', $3)) w labels offset 0,1 font ',7' notitle, 'results/tolerance_eg.csv' u 7:(strcol(2) eq 'dopri5-eg' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#1f77b4' t 'dopri5-eg', 'results/tolerance_eg.csv' u 7:(strcol(2) eq 'bosh3-eg' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#17becf' t 'bosh3-eg', 5.7547447242031996e-07 w l dt 2 lc rgb 'gray' t 'integration error: FD of the flow vs the ground truth'
set xlabel 'forward wall time per control step and environment (us)'
set title 'cube toss: gradient error vs wall time'
plot 'results/tolerance_eg.csv' u 9:(strcol(2) eq 'tsit5' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#98df8a' t 'tsit5', 'results/tolerance_eg.csv' u 9:(strcol(2) eq 'dopri5' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#aec7e8' t 'dopri5', 'results/tolerance_eg.csv' u 9:(strcol(2) eq 'bosh3' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#9edae5' t 'bosh3', 'results/tolerance_eg.csv' u 9:(strcol(2) eq 'tsit5-eg' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#2ca02c' t 'tsit5-eg', 'results/tolerance_eg.csv' u 9:(strcol(2) eq 'dopri5-eg' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#1f77b4' t 'dopri5-eg', 'results/tolerance_eg.csv' u 9:(strcol(2) eq 'bosh3-eg' ? $5 : NaN) w lp pt 7 ps 0.7 lc rgb '#17becf' t 'bosh3-eg', 5.7547447242031996e-07 w l dt 2 lc rgb 'gray' t 'integration error: FD of the flow vs the ground truth'
unset multiplot
