set terminal pngcairo size 1100,500 enhanced font 'Sans,10'
set output 'results/bcg_variance.png'
set datafile separator ','
set multiplot layout 1,2
set title 'Spread of dv_z,T/dp_z,0 over draws (tau = 0: every contact step bundled)'
set xlabel 'branches B'
set ylabel 'std over draws'
set logscale y
set xtics (1, 4, 10)
set key top right
plot for [k in '50 100 300'] 'results/bcg_variance.csv' every ::1 using ($1==k && $2==0 ? $3 : 1/0):5 with linespoints lw 2 title 'kappa '.k, 'results/bcg_variance.csv' every ::1 using ($1==300 && $2==400 ? $3 : 1/0):5 with linespoints dt 3 lw 2 title 'kappa 300, tau 400 N'
set title 'Variance reduction Var(B=1) / Var(B)'
set ylabel 'reduction'
plot for [k in '50 100 300'] 'results/bcg_variance.csv' every ::1 using ($1==k && $2==0 ? $3 : 1/0):6 with linespoints lw 2 title 'kappa '.k, 'results/bcg_variance.csv' every ::1 using ($1==300 && $2==400 ? $3 : 1/0):6 with linespoints dt 3 lw 2 title 'kappa 300, tau 400 N', x with lines dt 2 title 'B (independent branches)'
unset multiplot
