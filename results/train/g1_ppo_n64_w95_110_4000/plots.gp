set datafile separator ','
set terminal pngcairo size 800,500 noenhanced
set key autotitle columnhead
set grid
set output 'results/train/g1_ppo_n64_w95_110_4000/return_vs_steps.png'
set xlabel 'environment steps'
set ylabel 'mean return'
plot 'results/train/g1_ppo_n64_w95_110_4000/log.csv' using 2:4 with lines title 'mean return'
set output 'results/train/g1_ppo_n64_w95_110_4000/return_vs_time.png'
set xlabel 'wall time (s)'
plot 'results/train/g1_ppo_n64_w95_110_4000/log.csv' using 3:4 with lines title 'mean return'
set output 'results/train/g1_ppo_n64_w95_110_4000/grad_norm.png'
set xlabel 'environment steps'
set ylabel 'actor gradient norm (before clipping)'
set logscale y
plot 'results/train/g1_ppo_n64_w95_110_4000/log.csv' using 2:9 with lines title 'gradient norm'
unset logscale y
