set terminal pngcairo size 900,600
set output './hb-domain-sweep.png'
set title 'Iteration time vs HB domain size (rail-only analytical model, Eq. 1)'
set xlabel 'HB domain size K (GPUs)'
set ylabel 'iteration time (s)'
set logscale x 2
set logscale y
set key top right
set grid
plot './hb-domain-sweep.png.dat' index 0 using 1:2 with linespoints lw 2 title 'gpt3-175b', './hb-domain-sweep.png.dat' index 0 using 1:3 with lines dt 2 title 'gpt3-175b ideal'
