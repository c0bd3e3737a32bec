# Sweep results (cost, Pareto front, CSV tables, the parallel runner) and the views people look
# at (Chrome/Perfetto traces, SVG plots, self-contained HTML pages). Separate from dtsim_report so
# that the per-workload writers and these build and link independently.
dtsim_library(report_sweep
  SOURCES cluster_bill.cc pareto.cc sweep_table.cc sweep_runner.cc
  DEPS dtsim::config_sweep dtsim::sim_parallel fmt::fmt)
dtsim_library(report_views
  SOURCES chrome_trace.cc svg_plot.cc html_report.cc sweep_html.cc
  DEPS dtsim::report_sweep fmt::fmt)
