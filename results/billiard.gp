set terminal pngcairo size 1200,500 enhanced font 'Sans,10'
set output 'results/billiard.png'
set datafile separator ','
set multiplot layout 1,2
set title 'Loss and dL/du0 over the push (gradient axis clipped to [-1, 1])'
set xlabel 'u0'
set ylabel 'loss'
set y2label 'dL/du0'
set ytics nomirror
set y2tics
set y2range [-1:1]
set key top left
plot 'results/billiard_landscape.csv' every ::1 using 1:2 with lines lw 2 title 'loss', '' every ::1 using 1:3 axes x1y2 with lines dt 2 lw 2 title 'gradient (exact)', '' every ::1 using 1:4 axes x1y2 with lines lw 1 title 'gradient (CFD)'
unset y2label
unset y2tics
set ytics mirror
set title 'Gradient descent from starts that never touch'
set xlabel 'iteration'
set ylabel 'loss'
set logscale y
set key top right
plot 'results/billiard_descent.csv' every ::1 using ($1==1 ? $3 : 1/0):5 with points pt 7 ps 0.4 title 'with CFD', '' every ::1 using ($1==0 ? $3 : 1/0):5 with points pt 6 ps 0.4 title 'without CFD'
unset multiplot
