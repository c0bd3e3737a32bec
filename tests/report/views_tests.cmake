# Tests for the sweep tables, cost, traces and HTML pages (report/views.cmake).
find_package(ZLIB REQUIRED)
dtsim_test(report_views_test
  SOURCES chrome_trace_test.cc sweep_cost_test.cc html_report_test.cc
  DEPS dtsim::report_views dtsim::report_sweep nlohmann_json::nlohmann_json)
dtsim_test(html_render_test
  SOURCES html_render_test.cc png_image.cc
  DEPS dtsim::report_views ZLIB::ZLIB)
