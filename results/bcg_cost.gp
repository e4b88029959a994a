set terminal pngcairo size 900,500 enhanced font 'Sans,10'
set output 'results/bcg_cost.png'
set datafile separator ','
set title 'Bundling cost (B = 10, H = 2): forward + backward'
set xlabel 'fraction of environment-steps bundled'
set ylabel 'time, bundled / plain'
set key top left
plot 'results/bcg_cost.csv' every ::1 using 3:6 with points pt 7 ps 1.5 title 'measured', 1 + 10 * x - x with lines dt 2 title '1 + (B - 1) x (branches only)'
