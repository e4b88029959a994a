# written by scripts/train_summary.py
set datafile separator ','
set terminal pngcairo size 800,500 noenhanced
set grid
set key right bottom
set output 'cartpole_return_steps.png'
set title 'cartpole-swingup'
set xlabel 'environment steps'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'cartpole_shac/log.csv' using 2:4 skip 1 with lines lw 2 title 'cartpole_shac', 'cartpole_ppo/log.csv' using 2:4 skip 1 with lines lw 2 title 'cartpole_ppo'
set output 'cartpole_return_time.png'
set title 'cartpole-swingup'
set xlabel 'wall time (s)'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'cartpole_shac/log.csv' using 3:4 skip 1 with lines lw 2 title 'cartpole_shac', 'cartpole_ppo/log.csv' using 3:4 skip 1 with lines lw 2 title 'cartpole_ppo'
set output 'ant_return_steps.png'
set title 'ant-run'
set xlabel 'environment steps'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'ant_shac/log.csv' using 2:4 skip 1 with lines lw 2 title 'ant_shac', 'ant_shac_bcg/log.csv' using 2:4 skip 1 with lines lw 2 title 'ant_shac_bcg', 'ant_ppo/log.csv' using 2:4 skip 1 with lines lw 2 title 'ant_ppo'
set output 'ant_return_time.png'
set title 'ant-run'
set xlabel 'wall time (s)'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'ant_shac/log.csv' using 3:4 skip 1 with lines lw 2 title 'ant_shac', 'ant_shac_bcg/log.csv' using 3:4 skip 1 with lines lw 2 title 'ant_shac_bcg', 'ant_ppo/log.csv' using 3:4 skip 1 with lines lw 2 title 'ant_ppo'
set output 'g1_return_steps.png'
set title 'g1-imitate:run1_subject2, Impulse floor'
set xlabel 'environment steps'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'g1_shac/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac', 'g1_shac_bcg/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_bcg', 'g1_ppo/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo', 'g1_shac_explicit/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_explicit', 'g1_shac_bcg_explicit/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_bcg_explicit', 'g1_ppo_explicit/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_explicit'
set output 'g1_return_time.png'
set title 'g1-imitate:run1_subject2, Impulse floor'
set xlabel 'wall time (s)'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'g1_shac/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_shac', 'g1_shac_bcg/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_shac_bcg', 'g1_ppo/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_ppo', 'g1_shac_explicit/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_shac_explicit', 'g1_shac_bcg_explicit/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_shac_bcg_explicit', 'g1_ppo_explicit/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_ppo_explicit'
set output 'g1_tracking_steps.png'
set title 'g1-imitate:run1_subject2, Impulse floor'
set xlabel 'environment steps'
set ylabel 'mean tracking error (m)'
set key right bottom
plot 'g1_shac/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac', 'g1_shac_bcg/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg', 'g1_ppo/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_ppo', 'g1_shac_explicit/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_explicit', 'g1_ppo_explicit/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_ppo_explicit'
set output 'g1_add_tracking_steps.png'
set title 'g1-imitate:run1_subject2, ADD reward'
set xlabel 'environment steps'
set ylabel 'mean tracking error (m)'
set key right bottom
plot 'g1_shac_add_explicit/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_add_explicit', 'g1_ppo_add_explicit/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_ppo_add_explicit', 'g1_shac_soft_add/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_soft_add'
set output 'g1_horizon_return_steps.png'
set title 'g1-imitate:run1_subject2, Impulse floor, servos explicit, SHAC horizon 8 / 16 / 32'
set xlabel 'environment steps'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'g1_shac_h8_explicit/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_h8_explicit', 'g1_shac_h16_explicit/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_h16_explicit', 'g1_shac_explicit/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_explicit', 'g1_ppo_explicit/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_explicit'
set output 'g1_soft_return_steps.png'
set title 'g1-imitate:run1_subject2, Impulse floor vs soft contact'
set xlabel 'environment steps'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'g1_shac/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac', 'g1_ppo/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo', 'g1_shac_soft/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_soft', 'g1_shac_bcg_soft/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_bcg_soft', 'g1_ppo_soft/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_soft', 'g1_shac_soft_long/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_soft_long'
set output 'g1_soft_return_time.png'
set title 'g1-imitate:run1_subject2, Impulse floor vs soft contact'
set xlabel 'wall time (s)'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'g1_shac/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_shac', 'g1_ppo/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_ppo', 'g1_shac_soft/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_shac_soft', 'g1_shac_bcg_soft/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_shac_bcg_soft', 'g1_ppo_soft/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_ppo_soft', 'g1_shac_soft_long/log.csv' using 3:4 skip 1 with lines lw 2 title 'g1_shac_soft_long'
set output 'g1_kappa_tracking_steps.png'
set title 'g1-imitate, SHAC at kappa 50 / 100 / 300'
set xlabel 'environment steps'
set ylabel 'mean tracking error (m)'
set key right bottom
plot 'g1_shac_k50/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_k50', 'g1_shac_k100/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_k100', 'g1_shac/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac'
set output 'g1_kappa_bcg_tracking_steps.png'
set title 'g1-imitate, SHAC+BCG at kappa 50 / 100 / 300'
set xlabel 'environment steps'
set ylabel 'mean tracking error (m)'
set key right bottom
plot 'g1_shac_bcg_k50/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_k50', 'g1_shac_bcg_k100/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_k100', 'g1_shac_bcg/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg'
set output 'g1_kappa_bcg_explicit_tracking_steps.png'
set title 'g1-imitate, servos explicit, SHAC+BCG at kappa 50 / 100 / 300'
set xlabel 'environment steps'
set ylabel 'mean tracking error (m)'
set key right bottom
plot 'g1_shac_bcg_k50_explicit/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_k50_explicit', 'g1_shac_bcg_k100_explicit/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_k100_explicit', 'g1_shac_bcg_explicit/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_explicit'
set output 'g1_shac_settings_return_steps.png'
set title 'g1-imitate, Impulse floor: SHAC actor lr, horizon and environments'
set xlabel 'environment steps'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'g1_shac/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac', 'g1_shac_lr2e3/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3', 'g1_shac_lr1e3/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr1e3', 'g1_shac_h8/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_h8', 'g1_shac_h16/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_h16', 'g1_shac_n64/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_n64', 'g1_shac_lr2e3_n64/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64', 'g1_shac_lr2e3_n64_seed1/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_seed1', 'g1_shac_lr2e3_n64_c3/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_c3', 'g1_shac_lr2e3_n128/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n128', 'g1_shac_long/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_long'
set output 'g1_shac_settings_eval_length_steps.png'
set title 'g1-imitate, Impulse floor: SHAC settings, deterministic episodes'
set xlabel 'environment steps'
set ylabel 'episode length to a fall (control steps)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac', '< grep -v ",,,,$" g1_shac_lr2e3/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3', '< grep -v ",,,,$" g1_shac_lr1e3/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr1e3', '< grep -v ",,,,$" g1_shac_h8/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_h8', '< grep -v ",,,,$" g1_shac_h16/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_h16', '< grep -v ",,,,$" g1_shac_n64/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_n64', '< grep -v ",,,,$" g1_shac_lr2e3_n64/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64', '< grep -v ",,,,$" g1_shac_lr2e3_n64_seed1/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_seed1', '< grep -v ",,,,$" g1_shac_lr2e3_n64_c3/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_c3', '< grep -v ",,,,$" g1_shac_lr2e3_n128/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n128', '< grep -v ",,,,$" g1_shac_long/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_long'
set output 'g1_add_replay_eval_return_steps.png'
set title 'g1-imitate, ADD reward: discriminator with / without replay, deterministic episodes'
set xlabel 'environment steps'
set ylabel 'tracking return to a fall (task reward)'
set key left top
plot '< grep -v ",,,,$" g1_shac_soft_add/log.csv' using 2:17 skip 1 with linespoints lw 2 title 'g1_shac_soft_add', '< grep -v ",,,,$" g1_shac_soft_add_replay/log.csv' using 2:17 skip 1 with linespoints lw 2 title 'g1_shac_soft_add_replay', '< grep -v ",,,,$" g1_shac_soft_add_p0/log.csv' using 2:17 skip 1 with linespoints lw 2 title 'g1_shac_soft_add_p0', '< grep -v ",,,,$" g1_shac_soft_add_p0_replay/log.csv' using 2:17 skip 1 with linespoints lw 2 title 'g1_shac_soft_add_p0_replay', '< grep -v ",,,,$" g1_shac_soft_add_replay_m1/log.csv' using 2:17 skip 1 with linespoints lw 2 title 'g1_shac_soft_add_replay_m1', '< grep -v ",,,,$" g1_shac_add/log.csv' using 2:17 skip 1 with linespoints lw 2 title 'g1_shac_add', '< grep -v ",,,,$" g1_shac_add_replay/log.csv' using 2:17 skip 1 with linespoints lw 2 title 'g1_shac_add_replay'
set output 'g1_ref_return_steps.png'
set title 'g1-imitate, Impulse floor: servo targets at the reference (_ref) or home'
set xlabel 'environment steps'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'g1_shac_ref/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_ref', 'g1_shac_bcg_ref/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_bcg_ref', 'g1_ppo_ref/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_ref', 'g1_shac_ref_seed1/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_ref_seed1', 'g1_ppo_ref_seed1/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_ref_seed1', 'g1_shac_lr2e3_n64_ref/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_ref', 'g1_shac_lr2e3_n64_ref_long/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_ref_long', 'g1_shac_ref_s05/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_ref_s05', 'g1_shac/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac', 'g1_ppo/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo'
set output 'g1_ref_eval_tracking_steps.png'
set title 'g1-imitate, Impulse floor: servo targets, deterministic episodes'
set xlabel 'environment steps'
set ylabel 'tracking error to a fall (m)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac_ref/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_ref', '< grep -v ",,,,$" g1_shac_bcg_ref/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_bcg_ref', '< grep -v ",,,,$" g1_ppo_ref/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_ppo_ref', '< grep -v ",,,,$" g1_shac_ref_seed1/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_ref_seed1', '< grep -v ",,,,$" g1_ppo_ref_seed1/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_ppo_ref_seed1', '< grep -v ",,,,$" g1_shac_lr2e3_n64_ref/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_ref', '< grep -v ",,,,$" g1_shac_lr2e3_n64_ref_long/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_ref_long', '< grep -v ",,,,$" g1_shac_ref_s05/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_ref_s05', '< grep -v ",,,,$" g1_shac/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac', '< grep -v ",,,,$" g1_ppo/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_ppo'
set output 'g1_ref_eval_length_steps.png'
set title 'g1-imitate, Impulse floor: servo targets, deterministic episodes'
set xlabel 'environment steps'
set ylabel 'episode length to a fall (control steps)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac_ref/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_ref', '< grep -v ",,,,$" g1_shac_bcg_ref/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_bcg_ref', '< grep -v ",,,,$" g1_ppo_ref/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_ppo_ref', '< grep -v ",,,,$" g1_shac_ref_seed1/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_ref_seed1', '< grep -v ",,,,$" g1_ppo_ref_seed1/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_ppo_ref_seed1', '< grep -v ",,,,$" g1_shac_lr2e3_n64_ref/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_ref', '< grep -v ",,,,$" g1_shac_lr2e3_n64_ref_long/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_ref_long', '< grep -v ",,,,$" g1_shac_ref_s05/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_ref_s05', '< grep -v ",,,,$" g1_shac/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac', '< grep -v ",,,,$" g1_ppo/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_ppo'
set output 'g1_w95_return_steps.png'
set title 'g1-imitate, Impulse floor, reference targets: clip window 95-105 s (_w95) or the whole clip (_ref)'
set xlabel 'environment steps'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'g1_shac_w95/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_w95', 'g1_shac_bcg_w95/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_bcg_w95', 'g1_ppo_w95/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_w95', 'g1_shac_lr2e3_n64_w95/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_w95', 'g1_shac_lr2e3_n64_w95_long/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_w95_long', 'g1_shac_lr2e3_n64_w95_long_seed1/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_w95_long_seed1', 'g1_ppo_n64_w95/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_n64_w95', 'g1_shac_ref/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_ref', 'g1_ppo_ref/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_ref', 'g1_shac_lr2e3_n64_ref/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_ref'
set output 'g1_w95_eval_length_steps.png'
set title 'g1-imitate, Impulse floor, reference targets: clip window or whole clip, deterministic episodes'
set xlabel 'environment steps'
set ylabel 'episode length to a fall (control steps)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac_w95/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_w95', '< grep -v ",,,,$" g1_shac_bcg_w95/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_bcg_w95', '< grep -v ",,,,$" g1_ppo_w95/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_ppo_w95', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long_seed1/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long_seed1', '< grep -v ",,,,$" g1_ppo_n64_w95/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95', '< grep -v ",,,,$" g1_shac_ref/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_ref', '< grep -v ",,,,$" g1_ppo_ref/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_ppo_ref', '< grep -v ",,,,$" g1_shac_lr2e3_n64_ref/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_ref'
set output 'g1_w95_eval_tracking_steps.png'
set title 'g1-imitate, Impulse floor, reference targets: clip window or whole clip, deterministic episodes'
set xlabel 'environment steps'
set ylabel 'tracking error to a fall (m)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac_w95/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_w95', '< grep -v ",,,,$" g1_shac_bcg_w95/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_bcg_w95', '< grep -v ",,,,$" g1_ppo_w95/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_ppo_w95', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long_seed1/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long_seed1', '< grep -v ",,,,$" g1_ppo_n64_w95/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95', '< grep -v ",,,,$" g1_shac_ref/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_ref', '< grep -v ",,,,$" g1_ppo_ref/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_ppo_ref', '< grep -v ",,,,$" g1_shac_lr2e3_n64_ref/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_ref'
set output 'g1_w95_long_return_steps.png'
set title 'g1-imitate, clip window 95-105 s, 64 environments: long runs'
set xlabel 'environment steps'
set ylabel 'mean return (last 64 episodes)'
set key right bottom
plot 'g1_shac_lr2e3_n64_w95_long/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_w95_long', 'g1_shac_lr2e3_n64_w95_long_seed1/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_w95_long_seed1', 'g1_shac_lr2e3_n64_w95_800/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_w95_800', 'g1_shac_bcg_lr2e3_n64_w95_800/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_800', 'g1_shac_lr2e3_n64_w95_long_k100/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_w95_long_k100', 'g1_shac_lr2e3_n64_w95_long_k1000/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_w95_long_k1000', 'g1_ppo_n64_w95/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_n64_w95', 'g1_ppo_n64_w95_4000/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_n64_w95_4000'
set output 'g1_w95_long_eval_length_steps.png'
set title 'g1-imitate, clip window 95-105 s, 64 environments: deterministic episodes'
set xlabel 'environment steps'
set ylabel 'episode length to a fall (control steps)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long_seed1/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long_seed1', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_800/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_800', '< grep -v ",,,,$" g1_shac_bcg_lr2e3_n64_w95_800/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_800', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long_k100/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long_k100', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long_k1000/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long_k1000', '< grep -v ",,,,$" g1_ppo_n64_w95/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95', '< grep -v ",,,,$" g1_ppo_n64_w95_4000/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95_4000'
set output 'g1_w95_long_eval_falls_steps.png'
set title 'g1-imitate, clip window 95-105 s, 64 environments: falls of 5 deterministic episodes'
set xlabel 'environment steps'
set ylabel 'falls (of the evaluated episodes)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long_seed1/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long_seed1', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_800/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_800', '< grep -v ",,,,$" g1_shac_bcg_lr2e3_n64_w95_800/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_800', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long_k100/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long_k100', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_long_k1000/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_long_k1000', '< grep -v ",,,,$" g1_ppo_n64_w95/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95', '< grep -v ",,,,$" g1_ppo_n64_w95_4000/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95_4000'
set output 'g1_w95_10x_tracking_steps.png'
set title 'g1-imitate, clip window 95-105 s, 64 environments: training tracking error'
set xlabel 'environment steps (log scale)'
set ylabel 'mean tracking error (m)'
set key left bottom
set logscale x
plot 'g1_shac_bcg_lr2e3_n64_w95_800/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_800', 'g1_shac_lr2e3_n64_w95_800/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_lr2e3_n64_w95_800', 'g1_ppo_n64_w95_4000/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_ppo_n64_w95_4000'
unset logscale x
set output 'g1_w95_10x_eval_falls_steps.png'
set title 'g1-imitate, clip window 95-105 s, 64 environments: falls of 5 deterministic episodes'
set xlabel 'environment steps (log scale)'
set ylabel 'falls (of the evaluated episodes)'
set key left bottom
set logscale x
plot '< grep -v ",,,,$" g1_shac_bcg_lr2e3_n64_w95_800/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_800', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_800/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_800', '< grep -v ",,,,$" g1_ppo_n64_w95_4000/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95_4000'
unset logscale x
set output 'g1_w95_10x_eval_tracking_steps.png'
set title 'g1-imitate, clip window 95-105 s, 64 environments: deterministic episodes'
set xlabel 'environment steps (log scale)'
set ylabel 'tracking error to a fall (m)'
set key left bottom
set logscale x
plot '< grep -v ",,,,$" g1_shac_bcg_lr2e3_n64_w95_800/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_800', '< grep -v ",,,,$" g1_shac_lr2e3_n64_w95_800/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_lr2e3_n64_w95_800', '< grep -v ",,,,$" g1_ppo_n64_w95_4000/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95_4000'
unset logscale x
set output 'g1_w110_tracking_steps.png'
set title 'g1-imitate, clip window 95-110 s (15 s), 64 environments: training tracking error'
set xlabel 'environment steps (log scale)'
set ylabel 'mean tracking error (m)'
set key left bottom
set logscale x
plot 'g1_shac_bcg_lr2e3_n64_w95_110/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110', 'g1_ppo_n64_w95_110_4000/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_ppo_n64_w95_110_4000'
unset logscale x
set output 'g1_w110_return_steps.png'
set title 'g1-imitate, clip window 95-110 s (15 s), 64 environments: mean return'
set xlabel 'environment steps (log scale)'
set ylabel 'mean return (last 64 episodes)'
set key left bottom
set logscale x
plot 'g1_shac_bcg_lr2e3_n64_w95_110/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110', 'g1_ppo_n64_w95_110_4000/log.csv' using 2:4 skip 1 with lines lw 2 title 'g1_ppo_n64_w95_110_4000'
unset logscale x
set output 'g1_w110_eval_falls_steps.png'
set title 'g1-imitate, clip window 95-110 s (15 s), 64 environments: falls of 5 deterministic episodes'
set xlabel 'environment steps (log scale)'
set ylabel 'falls (of the evaluated episodes)'
set key left bottom
set logscale x
plot '< grep -v ",,,,$" g1_shac_bcg_lr2e3_n64_w95_110/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110', '< grep -v ",,,,$" g1_ppo_n64_w95_110_4000/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95_110_4000'
unset logscale x
set output 'g1_w110_eval_tracking_steps.png'
set title 'g1-imitate, clip window 95-110 s (15 s), 64 environments: deterministic episodes'
set xlabel 'environment steps (log scale)'
set ylabel 'tracking error to a fall (m)'
set key left bottom
set logscale x
plot '< grep -v ",,,,$" g1_shac_bcg_lr2e3_n64_w95_110/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110', '< grep -v ",,,,$" g1_ppo_n64_w95_110_4000/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_ppo_n64_w95_110_4000'
unset logscale x
set output 'g1_w110_kappa_tracking_steps.png'
set title 'g1-imitate 95-110 s, SHAC+BCG at kappa 50 / 100 / 300: training tracking error'
set xlabel 'environment steps (log scale)'
set ylabel 'mean tracking error (m)'
set key left bottom
set logscale x
plot 'g1_shac_bcg_lr2e3_n64_w95_110_k50/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110_k50', 'g1_shac_bcg_lr2e3_n64_w95_110_k100/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110_k100', 'g1_shac_bcg_lr2e3_n64_w95_110/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110', 'g1_ppo_n64_w95_110_4000/log.csv' using 2:15 skip 1 with lines lw 2 title 'g1_ppo_n64_w95_110_4000'
unset logscale x
set output 'g1_w110_kappa_eval_falls_steps.png'
set title 'g1-imitate 95-110 s, SHAC+BCG at kappa 50 / 100 / 300: falls of 5 episodes in stiffgrad'
set xlabel 'environment steps'
set ylabel 'falls (of the evaluated episodes)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac_bcg_lr2e3_n64_w95_110_k50/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110_k50', '< grep -v ",,,,$" g1_shac_bcg_lr2e3_n64_w95_110_k100/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110_k100', '< grep -v ",,,,$" g1_shac_bcg_lr2e3_n64_w95_110/log.csv' using 2:19 skip 1 with linespoints lw 2 title 'g1_shac_bcg_lr2e3_n64_w95_110'
set output 'g1_eval_length_steps.png'
set title 'g1-imitate:run1_subject2, Impulse floor: deterministic episodes (train --eval-every)'
set xlabel 'environment steps'
set ylabel 'episode length to a fall (control steps)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac', '< grep -v ",,,,$" g1_shac_bcg/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_bcg', '< grep -v ",,,,$" g1_ppo/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_ppo', '< grep -v ",,,,$" g1_shac_long/log.csv' using 2:18 skip 1 with linespoints lw 2 title 'g1_shac_long'
set output 'g1_eval_tracking_steps.png'
set title 'g1-imitate:run1_subject2, Impulse floor: deterministic episodes (train --eval-every)'
set xlabel 'environment steps'
set ylabel 'tracking error to a fall (m)'
set key right bottom
plot '< grep -v ",,,,$" g1_shac/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac', '< grep -v ",,,,$" g1_shac_bcg/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_bcg', '< grep -v ",,,,$" g1_ppo/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_ppo', '< grep -v ",,,,$" g1_shac_long/log.csv' using 2:20 skip 1 with linespoints lw 2 title 'g1_shac_long'
set output 'g1_w110_kappa_mujoco_falls_steps.png'
set title 'g1-imitate 95-110 s, SHAC+BCG at kappa 50 / 100 / 300: falls of 20 episodes in MuJoCo 2.2.2'
set xlabel 'environment steps'
set ylabel 'falls in MuJoCo 2.2.2 (of 20 deterministic episodes)'
set key left bottom
plot 'g1_w110_kappa_mujoco_falls.csv' using 1:2 skip 1 with linespoints lw 2 title 'kappa 50', 'g1_w110_kappa_mujoco_falls.csv' using 1:3 skip 1 with linespoints lw 2 title 'kappa 100', 'g1_w110_kappa_mujoco_falls.csv' using 1:4 skip 1 with linespoints lw 2 title 'kappa 300'
