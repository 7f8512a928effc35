# bench/chart.gp — the chart of bench/run's ratios (bench/results.png).
# bench/run calls it with: work (directory of call.dat, ins.dat, pgb.dat,
# q.dat), out (the PNG to write) and title. Every panel is a ratio to the
# baseline (dashed line at 1); the labels give the values.

set terminal pngcairo size 1500,1100 noenhanced font "DejaVu Sans,11"
set output out
set multiplot layout 2,2 title title font ",13"

set style fill solid 0.85 border -1
set grid ytics lc rgb "#dddddd"
set key top center horizontal
set xtics nomirror scale 0
set offsets 0.5, 0.5, graph 0.14, 0
set yrange [0:*]

# 1. per call, time relative to nextval (log scale: PL/pgSQL is far off).
set title "1-2. Time per call ÷ nextval, one backend (lower is faster; log scale)"
set logscale y
set yrange [0.5:*]
set offsets 0.5, 0.5, 0, 0
set boxwidth 0.6
plot work."/call.dat" using 1:2:xtic(3) with boxes lc rgb "#4477aa" notitle, \
     "" using 1:2:(sprintf("%.2f×", $2)) with labels offset 0,0.8 notitle, \
     1 with lines lc rgb "black" dt 2 notitle
unset logscale y
set yrange [0:*]
set offsets 0.5, 0.5, graph 0.14, 0

# 2. INSERT 1M rows: time and primary-key size relative to bigserial.
set title "3. INSERT of 1M rows ÷ bigserial (lower is better)"
set boxwidth 0.35
plot work."/ins.dat" using ($1-0.19):2:xtic(4) with boxes lc rgb "#4477aa" title "time", \
     "" using ($1+0.19):3 with boxes lc rgb "#ccbb44" title "primary-key index size", \
     "" using ($1-0.19):2:(sprintf("%.2f", $2)) with labels offset 0,0.8 notitle, \
     "" using ($1+0.19):3:(sprintf("%.2f", $3)) with labels offset 0,0.8 notitle, \
     1 with lines lc rgb "black" dt 2 notitle

# 3. pgbench tps relative to bigserial, by clients.
# pgb.dat columns: x, clients, then shardid, bigserial, plpgsql, uuidv4.
set title "4. pgbench single-row INSERT tps ÷ bigserial (higher is better)"
set xlabel "clients"
set boxwidth 0.25
plot work."/pgb.dat" using ($1-0.27):3:xtic(2) with boxes lc rgb "#4477aa" title "shardid", \
     "" using ($1):5 with boxes lc rgb "#ee6677" title "PL/pgSQL original", \
     "" using ($1+0.27):6 with boxes lc rgb "#228833" title "UUIDv4", \
     "" using ($1-0.27):3:(sprintf("%.2f", $3)) with labels offset 0,0.8 notitle, \
     "" using ($1):5:(sprintf("%.2f", $5)) with labels offset 0,0.8 notitle, \
     "" using ($1+0.27):6:(sprintf("%.2f", $6)) with labels offset 0,0.8 notitle, \
     1 with lines lc rgb "black" dt 2 notitle
unset xlabel

# 4. time-window query latency relative to the created_at index.
# q.dat columns: x, window, ms by primary key, ms by created_at.
set offsets 0.5, 0.5, graph 0.25, 0
set title "5. Time-window query latency ÷ created_at index (lower is better)"
set boxwidth 0.35
plot work."/q.dat" using ($1-0.19):($3/$4):xtic(2) with boxes lc rgb "#4477aa" title "primary key, time_to_id(a) <= id < time_to_id(b)", \
     "" using ($1+0.19):(1) with boxes lc rgb "#bbbbbb" title "created_at index", \
     "" using ($1-0.19):($3/$4):(sprintf("%.3f ms", $3)) with labels offset 0,0.8 notitle, \
     "" using ($1+0.19):(1):(sprintf("%.3f ms", $4)) with labels offset 0,0.8 notitle, \
     1 with lines lc rgb "black" dt 2 notitle

unset multiplot
