set terminal pngcairo size 1000,650 enhanced font 'Sans,10'
set output 'results/shac_gradient/g1_gradient_vs_horizon.png'
set termoption noenhanced
set datafile separator ','
set logscale xy
set grid
set key left top
set xlabel 'horizon H (control steps)'
set ylabel '|dL/dtheta| (SHAC actor loss, normalized by H N)'
set title 'SHAC gradient on g1-imitate:run1_subject2'
plot 'results/shac_gradient/g1_gradient_vs_horizon.csv' using 1:2 skip 1 with linespoints lw 2 title 'impulse_k300_explicit', 'results/shac_gradient/g1_gradient_vs_horizon.csv' using 1:3 skip 1 with linespoints lw 2 title 'impulse_k300', 'results/shac_gradient/g1_gradient_vs_horizon.csv' using 1:4 skip 1 with linespoints lw 2 title 'impulse_k50', 'results/shac_gradient/g1_gradient_vs_horizon.csv' using 1:5 skip 1 with linespoints lw 2 title 'impulse_k300_bcg', 'results/shac_gradient/g1_gradient_vs_horizon.csv' using 1:6 skip 1 with linespoints lw 2 title 'impulse_k300_bcg_all', 'results/shac_gradient/g1_gradient_vs_horizon.csv' using 1:7 skip 1 with linespoints lw 2 title 'soft', 'results/shac_gradient/g1_gradient_vs_horizon.csv' using 1:8 skip 1 with linespoints lw 2 title 'free'
