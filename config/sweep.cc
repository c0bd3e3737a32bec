#include "config/sweep.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "sim/yaml_text.h"

namespace dtsim::config {

// ---------------------------------------------------------------------------------------------
// The `where:` expression language.

struct SweepCondition::Node {
  enum class Kind { number, string, name, unary, binary };
  Kind kind = Kind::number;
  double number = 0;
  std::string text;  // string literal, name, or operator
  std::unique_ptr<const Node> lhs;
  std::unique_ptr<const Node> rhs;
};

namespace {

using Node = SweepCondition::Node;
using NodePtr = std::unique_ptr<const Node>;

[[noreturn]] void fail_at(std::size_t pos, const std::string& what) {
  throw std::invalid_argument("column " + std::to_string(pos + 1) + ": " + what);
}

class ExpressionParser {
 public:
  explicit ExpressionParser(std::string_view text) : s_(text) {}

  NodePtr parse() {
    NodePtr n = parse_or();
    skip_space();
    if (pos_ != s_.size()) fail_at(pos_, "unexpected '" + std::string(1, s_[pos_]) + "'");
    return n;
  }

 private:
  void skip_space() {
    while (pos_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[pos_]))) ++pos_;
  }
  bool accept(std::string_view op) {
    skip_space();
    if (s_.substr(pos_, op.size()) != op) return false;
    // "<" must not swallow the first half of "<=", nor "=" of "==" etc.
    if (op.size() == 1 && pos_ + 1 < s_.size() && s_[pos_ + 1] == '=' &&
        (op == "<" || op == ">" || op == "!")) {
      return false;
    }
    pos_ += op.size();
    return true;
  }
  static NodePtr binary(std::string op, NodePtr l, NodePtr r) {
    auto n = std::make_unique<Node>();
    n->kind = Node::Kind::binary;
    n->text = std::move(op);
    n->lhs = std::move(l);
    n->rhs = std::move(r);
    return n;
  }

  NodePtr parse_or() {
    NodePtr l = parse_and();
    while (accept("||")) l = binary("||", std::move(l), parse_and());
    return l;
  }
  NodePtr parse_and() {
    NodePtr l = parse_equality();
    while (accept("&&")) l = binary("&&", std::move(l), parse_equality());
    return l;
  }
  NodePtr parse_equality() {
    NodePtr l = parse_relational();
    for (;;) {
      if (accept("==")) {
        l = binary("==", std::move(l), parse_relational());
      } else if (accept("!=")) {
        l = binary("!=", std::move(l), parse_relational());
      } else {
        return l;
      }
    }
  }
  NodePtr parse_relational() {
    NodePtr l = parse_additive();
    for (;;) {
      std::string op;
      for (const char* candidate : {"<=", ">=", "<", ">"}) {
        if (accept(candidate)) {
          op = candidate;
          break;
        }
      }
      if (op.empty()) return l;
      l = binary(op, std::move(l), parse_additive());
    }
  }
  NodePtr parse_additive() {
    NodePtr l = parse_multiplicative();
    for (;;) {
      if (accept("+")) {
        l = binary("+", std::move(l), parse_multiplicative());
      } else if (accept("-")) {
        l = binary("-", std::move(l), parse_multiplicative());
      } else {
        return l;
      }
    }
  }
  NodePtr parse_multiplicative() {
    NodePtr l = parse_unary();
    for (;;) {
      std::string op;
      for (const char* candidate : {"*", "/", "%"}) {
        if (accept(candidate)) {
          op = candidate;
          break;
        }
      }
      if (op.empty()) return l;
      l = binary(op, std::move(l), parse_unary());
    }
  }
  NodePtr parse_unary() {
    for (const char* op : {"-", "!"}) {
      if (accept(op)) {
        auto n = std::make_unique<Node>();
        n->kind = Node::Kind::unary;
        n->text = op;
        n->lhs = parse_unary();
        return n;
      }
    }
    return parse_primary();
  }
  NodePtr parse_primary() {
    skip_space();
    if (pos_ >= s_.size()) fail_at(pos_, "expected a number, name or '(' but the condition ended");
    const char c = s_[pos_];
    auto n = std::make_unique<Node>();
    if (c == '(') {
      ++pos_;
      NodePtr inner = parse_or();
      if (!accept(")")) fail_at(pos_, "expected ')'");
      return inner;
    }
    if (c == '"') {
      const std::size_t close = s_.find('"', pos_ + 1);
      if (close == std::string_view::npos) fail_at(pos_, "string without a closing '\"'");
      n->kind = Node::Kind::string;
      n->text = std::string(s_.substr(pos_ + 1, close - pos_ - 1));
      pos_ = close + 1;
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c)) || c == '.') {
      const std::string rest(s_.substr(pos_));
      std::size_t used = 0;
      try {
        n->number = std::stod(rest, &used);
      } catch (const std::exception&) {
        fail_at(pos_, "malformed number");
      }
      n->kind = Node::Kind::number;
      pos_ += used;
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      const std::size_t start = pos_;
      while (pos_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[pos_])) ||
                                  s_[pos_] == '_' || s_[pos_] == '.')) {
        ++pos_;
      }
      n->kind = Node::Kind::name;
      n->text = std::string(s_.substr(start, pos_ - start));
      return n;
    }
    fail_at(pos_, "unexpected '" + std::string(1, c) + "'");
  }

  std::string_view s_;
  std::size_t pos_ = 0;
};

double as_number(const SweepValue& v, const std::string& op) {
  if (const double* d = std::get_if<double>(&v)) return *d;
  throw std::invalid_argument("'" + op + "' needs numbers, got the string \"" +
                              std::get<std::string>(v) + "\"");
}

SweepValue eval(const Node& n, const SweepCondition::Lookup& lookup) {
  switch (n.kind) {
    case Node::Kind::number:
      return n.number;
    case Node::Kind::string:
      return n.text;
    case Node::Kind::name: {
      std::optional<SweepValue> v = lookup(n.text);
      if (!v) throw std::invalid_argument("unknown name '" + n.text + "'");
      return *v;
    }
    case Node::Kind::unary: {
      const double x = as_number(eval(*n.lhs, lookup), n.text);
      return n.text == "-" ? -x : (x == 0 ? 1.0 : 0.0);
    }
    case Node::Kind::binary:
      break;
  }
  const std::string& op = n.text;
  if (op == "&&") {
    if (as_number(eval(*n.lhs, lookup), op) == 0) return 0.0;
    return as_number(eval(*n.rhs, lookup), op) != 0 ? 1.0 : 0.0;
  }
  if (op == "||") {
    if (as_number(eval(*n.lhs, lookup), op) != 0) return 1.0;
    return as_number(eval(*n.rhs, lookup), op) != 0 ? 1.0 : 0.0;
  }
  const SweepValue l = eval(*n.lhs, lookup);
  const SweepValue r = eval(*n.rhs, lookup);
  if (op == "==" || op == "!=") {
    if (l.index() != r.index()) {
      throw std::invalid_argument("'" + op + "' compares a number with a string");
    }
    return (l == r) == (op == "==") ? 1.0 : 0.0;
  }
  const double a = as_number(l, op);
  const double b = as_number(r, op);
  if (op == "<") return a < b ? 1.0 : 0.0;
  if (op == "<=") return a <= b ? 1.0 : 0.0;
  if (op == ">") return a > b ? 1.0 : 0.0;
  if (op == ">=") return a >= b ? 1.0 : 0.0;
  if (op == "+") return a + b;
  if (op == "-") return a - b;
  if (op == "*") return a * b;
  if (op == "/") {
    if (b == 0) throw std::invalid_argument("division by zero");
    return a / b;
  }
  if (b == 0) throw std::invalid_argument("remainder by zero");
  return std::fmod(a, b);
}

// A scalar as a where-value: a number when the whole text is one, else the text itself.
SweepValue to_value(const std::string& text) {
  if (!text.empty()) {
    char* end = nullptr;
    const double d = std::strtod(text.c_str(), &end);
    if (end == text.c_str() + text.size()) return d;
  }
  return text;
}

// ---------------------------------------------------------------------------------------------
// Reading the file.

class SweepReader {
 public:
  explicit SweepReader(std::string file) : file_(std::move(file)) {}

  [[noreturn]] void fail(const YAML::Node& at, const std::string& key,
                         const std::string& what) const {
    SourceLocation where{file_, 0, 0};
    if (at.IsDefined()) {
      where.line = at.Mark().line + 1;
      where.column = at.Mark().column + 1;
    }
    throw InputError(where, key, what);
  }

  SourceLocation where(const YAML::Node& at) const {
    return {file_, at.Mark().line + 1, at.Mark().column + 1};
  }

  // The scalar or flow-style text a value becomes in an Override.
  static std::string value_text(const YAML::Node& n) {
    if (n.IsScalar()) return n.Scalar();
    YAML::Emitter e;
    e.SetSeqFormat(YAML::Flow);
    e.SetMapFormat(YAML::Flow);
    e << n;
    return e.c_str();
  }

  double number(const YAML::Node& n, const std::string& key) const {
    if (!n.IsScalar()) fail(n, key, "expected a number");
    try {
      std::size_t used = 0;
      const double d = std::stod(n.Scalar(), &used);
      if (used != n.Scalar().size() || !std::isfinite(d) || d < 0) throw std::invalid_argument("");
      return d;
    } catch (const std::exception&) {
      fail(n, key, "expected a non-negative number, got \"" + n.Scalar() + "\"");
    }
  }

  // A `vary:` value: a list, or a geometric or arithmetic range {from, to, factor | step}.
  std::vector<std::string> values(const YAML::Node& n, const std::string& key) const {
    std::vector<std::string> out;
    if (n.IsSequence()) {
      for (const YAML::Node& item : n) out.push_back(value_text(item));
    } else if (n.IsMap()) {
      for (const auto& kv : n) {
        const std::string k = kv.first.Scalar();
        if (k != "from" && k != "to" && k != "factor" && k != "step") {
          fail(kv.first, key + "." + k, "unknown range key; expected from, to, factor or step");
        }
      }
      if (!n["from"] || !n["to"] || (!n["factor"] == !n["step"])) {
        fail(n, key, "a range needs from, to, and exactly one of factor or step");
      }
      const double from = number(n["from"], key + ".from");
      const double to = number(n["to"], key + ".to");
      const bool geometric = static_cast<bool>(n["factor"]);
      const double by =
          number(geometric ? n["factor"] : n["step"], key + (geometric ? ".factor" : ".step"));
      if (geometric ? by <= 1 : by <= 0) {
        fail(geometric ? n["factor"] : n["step"], key,
             geometric ? "factor must be greater than 1" : "step must be positive");
      }
      for (double v = from; v <= to * (1 + 1e-12); v = geometric ? v * by : v + by) {
        std::ostringstream os;
        os.precision(15);
        os << v;
        out.push_back(os.str());
        if (out.size() > 100000) fail(n, key, "range has more than 100000 values");
      }
    } else {
      fail(n, key, "expected a list of values or a range {from, to, factor|step}");
    }
    if (out.empty()) fail(n, key, "expected at least one value");
    return out;
  }

  void read_cost(const YAML::Node& n, CostModel& c) const {
    if (!n.IsMap())
      fail(n, "cost", "expected a map of prices (gpu, switch, nic, link, optics, watts)");
    for (const auto& kv : n) {
      const std::string k = kv.first.Scalar();
      const std::string key = "cost." + k;
      if (k == "gpu") {
        c.gpu_usd = number(kv.second, key);
      } else if (k == "switch") {
        c.switch_usd = number(kv.second, key);
      } else if (k == "nic") {
        c.nic_usd = number(kv.second, key);
      } else if (k == "link") {
        c.link_usd = number(kv.second, key);
      } else if (k == "optics") {
        c.optics_usd = number(kv.second, key);
      } else if (k == "watts") {
        if (!kv.second.IsMap()) fail(kv.second, key, "expected a map: gpu, switch, nic, optics");
        for (const auto& w : kv.second) {
          const std::string wk = w.first.Scalar();
          const std::string wkey = key + "." + wk;
          if (wk == "gpu") {
            c.gpu_w = number(w.second, wkey);
          } else if (wk == "switch") {
            c.switch_w = number(w.second, wkey);
          } else if (wk == "nic") {
            c.nic_w = number(w.second, wkey);
          } else if (wk == "optics") {
            c.optics_w = number(w.second, wkey);
          } else {
            fail(w.first, wkey, "unknown key; expected gpu, switch, nic or optics");
          }
        }
      } else {
        fail(kv.first, key, "unknown key; expected gpu, switch, nic, link, optics or watts");
      }
    }
  }

  Sweep read(const YAML::Node& root) const {
    Sweep sw;
    sw.file = file_;
    sw.name = std::filesystem::path(file_).stem().string();
    if (!root.IsMap()) fail(root, "", "expected a map with base, vary, zip, where and cost");
    std::set<std::string> seen_keys;
    auto add_key = [&](const YAML::Node& at, const std::string& key) {
      if (!seen_keys.insert(key).second) fail(at, key, "varied twice (in vary: or zip:)");
    };
    for (const auto& kv : root) {
      const std::string k = kv.first.Scalar();
      const YAML::Node& v = kv.second;
      if (k == "name") {
        if (!v.IsScalar()) fail(v, k, "expected a name");
        sw.name = v.Scalar();
      } else if (k == "base") {
        if (!v.IsScalar() || v.Scalar().empty()) fail(v, k, "expected the path of a scenario file");
        const std::filesystem::path p(v.Scalar());
        sw.base =
            p.is_absolute()
                ? p.string()
                : (std::filesystem::path(file_).parent_path() / p).lexically_normal().string();
      } else if (k == "vary") {
        if (!v.IsMap()) fail(v, k, "expected a map from dotted keys to lists of values");
        for (const auto& entry : v) {
          const std::string key = entry.first.Scalar();
          add_key(entry.first, key);
          SweepAxis axis;
          axis.keys = {key};
          for (std::string& value : values(entry.second, key))
            axis.values.push_back({std::move(value)});
          sw.axes.push_back(std::move(axis));
        }
      } else if (k == "zip") {
        if (!v.IsSequence()) fail(v, k, "expected a list of groups, each a map from keys to lists");
        for (const YAML::Node& group : v) {
          if (!group.IsMap() || group.size() == 0)
            fail(group, k, "expected a map from keys to lists");
          SweepAxis axis;
          std::size_t length = 0;
          for (const auto& entry : group) {
            const std::string key = entry.first.Scalar();
            add_key(entry.first, key);
            std::vector<std::string> vals = values(entry.second, key);
            if (axis.keys.empty()) {
              length = vals.size();
              axis.values.resize(length);
            } else if (vals.size() != length) {
              fail(entry.second, key,
                   "a zip group's lists advance together, so they need the same length: " +
                       std::to_string(vals.size()) + " values here, " + std::to_string(length) +
                       " for " + axis.keys.front());
            }
            axis.keys.push_back(key);
            for (std::size_t i = 0; i < length; ++i) axis.values[i].push_back(std::move(vals[i]));
          }
          sw.axes.push_back(std::move(axis));
        }
      } else if (k == "where") {
        std::vector<YAML::Node> items;
        if (v.IsScalar()) {
          items.push_back(v);
        } else if (v.IsSequence()) {
          for (const YAML::Node& item : v) items.push_back(item);
        } else {
          fail(v, k, "expected a condition or a list of conditions");
        }
        for (const YAML::Node& item : items) {
          if (!item.IsScalar()) fail(item, k, "expected a condition such as \"tp*pp*dp == gpus\"");
          try {
            sw.where.emplace_back(SweepCondition::parse(item.Scalar()), where(item));
          } catch (const std::invalid_argument& e) {
            fail(item, k, std::string(e.what()) + " in \"" + item.Scalar() + "\"");
          }
        }
      } else if (k == "cost") {
        read_cost(v, sw.cost);
      } else {
        fail(kv.first, k, "unknown key; expected name, base, vary, zip, where or cost");
      }
    }
    if (sw.base.empty()) fail(root, "base", "missing: the scenario file the sweep varies");
    if (sw.axes.empty())
      fail(root, "vary", "missing: a sweep needs at least one key in vary: or zip:");
    return sw;
  }

 private:
  std::string file_;
};

// A key's value in the raw base YAML, by dotted path; nullopt when absent or not a scalar.
std::optional<std::string> raw_lookup(const YAML::Node& root, std::string_view dotted) {
  YAML::Node n;
  n.reset(root);  // rebinding, not assignment: `n = ...` would write into the tree
  std::size_t start = 0;
  while (start <= dotted.size()) {
    const std::size_t dot = dotted.find('.', start);
    const std::string part(
        dotted.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    const YAML::Node& cur = n;
    if (!cur.IsMap() || !cur[part]) return std::nullopt;
    n.reset(cur[part]);
    if (dot == std::string_view::npos) break;
    start = dot + 1;
  }
  if (!n.IsScalar()) return std::nullopt;
  return n.Scalar();
}

}  // namespace

SweepCondition SweepCondition::parse(std::string_view text) {
  SweepCondition c;
  c.root_ = ExpressionParser(text).parse();
  c.text_ = std::string(text);
  return c;
}

SweepValue SweepCondition::evaluate(const Lookup& lookup) const {
  return eval(*root_, lookup);
}

bool SweepCondition::holds(const Lookup& lookup) const {
  const SweepValue v = evaluate(lookup);
  if (const double* d = std::get_if<double>(&v)) return *d != 0;
  throw std::invalid_argument("the condition is a string, not true or false");
}

std::vector<std::string> Sweep::varied_keys() const {
  std::vector<std::string> out;
  for (const SweepAxis& a : axes) out.insert(out.end(), a.keys.begin(), a.keys.end());
  return out;
}

Sweep read_sweep_text(std::string_view yaml, const std::string& source_name) {
  check_yaml_text(yaml, source_name);
  YAML::Node root;
  try {
    root = YAML::Load(std::string(yaml));
  } catch (const YAML::Exception& e) {
    throw InputError(SourceLocation{source_name, e.mark.line + 1, e.mark.column + 1}, "",
                     "not valid YAML: " + e.msg);
  }
  return SweepReader(source_name).read(root);
}

Sweep read_sweep(const std::string& path) {
  std::ifstream in(path);
  if (!in) throw InputError(SourceLocation{path, 0, 0}, "", "cannot open the sweep file");
  std::stringstream text;
  text << in.rdbuf();
  return read_sweep_text(text.str(), path);
}

std::vector<SweepPoint> expand_sweep(const Sweep& sweep, const ScenarioLoader& load) {
  const std::vector<std::string> keys = sweep.varied_keys();

  // Short names: the last segment of a varied key, when no other varied key ends the same way.
  std::map<std::string, std::size_t, std::less<>> short_names;
  std::set<std::string, std::less<>> ambiguous;
  for (std::size_t k = 0; k < keys.size(); ++k) {
    const std::size_t dot = keys[k].rfind('.');
    const std::string tail = dot == std::string::npos ? keys[k] : keys[k].substr(dot + 1);
    if (!short_names.emplace(tail, k).second) ambiguous.insert(tail);
  }
  for (const std::string& a : ambiguous) short_names.erase(a);

  std::optional<Scenario> base;
  YAML::Node raw;
  if (!sweep.where.empty()) {
    base = load(sweep.base, {});
    try {
      raw = YAML::LoadFile(sweep.base);
    } catch (const YAML::Exception&) {
      raw = YAML::Node();  // the loader has accepted the base; raw keys are a convenience only
    }
  }

  std::vector<SweepPoint> points;
  std::vector<std::size_t> step(sweep.axes.size(), 0);
  for (;;) {
    SweepPoint p;
    for (std::size_t a = 0; a < sweep.axes.size(); ++a) {
      const std::vector<std::string>& vals = sweep.axes[a].values[step[a]];
      p.values.insert(p.values.end(), vals.begin(), vals.end());
    }
    for (std::size_t k = 0; k < keys.size(); ++k) p.overrides.push_back({keys[k], p.values[k]});

    auto varied = [&](std::string_view name) -> std::optional<std::string> {
      for (std::size_t k = 0; k < keys.size(); ++k) {
        if (keys[k] == name) return p.values[k];
      }
      if (auto it = short_names.find(name); it != short_names.end()) return p.values[it->second];
      return std::nullopt;
    };
    auto lookup = [&](std::string_view name) -> std::optional<SweepValue> {
      if (auto v = varied(name)) return to_value(*v);
      if (!base) return std::nullopt;
      const topology::ClusterSpec& c = base->cluster;
      const workloads::ParallelSpec& par = base->workload.training.parallel;
      auto num = [&](std::string_view dotted, double fallback) -> double {
        if (auto v = varied(dotted)) {
          const SweepValue x = to_value(*v);
          if (const double* d = std::get_if<double>(&x)) return *d;
        }
        return fallback;
      };
      if (name == "nodes") return num("cluster.nodes", c.nodes);
      if (name == "gpus_per_node") return num("cluster.gpus_per_node", c.gpus_per_node);
      if (name == "gpus") {
        return num("cluster.nodes", c.nodes) * num("cluster.gpus_per_node", c.gpus_per_node);
      }
      static constexpr std::string_view kParallel[] = {"tp", "pp", "dp", "ep", "cp", "vp"};
      const int par_values[] = {par.tp, par.pp, par.dp, par.ep, par.cp, par.vp};
      for (std::size_t i = 0; i < std::size(kParallel); ++i) {
        if (name == kParallel[i]) {
          return num("workload.parallel." + std::string(kParallel[i]), par_values[i]);
        }
      }
      if (name == "layers")
        return num("workload.model.layers", base->workload.training.model.layers);
      if (name == "micro_batch")
        return num("workload.batch.micro", base->workload.training.batch.micro);
      if (name == "global_batch") {
        return num("workload.batch.global", base->workload.training.batch.global);
      }
      if (raw.IsDefined() && !raw.IsNull()) {
        if (auto v = raw_lookup(raw, name)) return to_value(*v);
      }
      return std::nullopt;
    };

    bool keep = true;
    for (const auto& [cond, at] : sweep.where) {
      try {
        if (!cond.holds(lookup)) {
          keep = false;
          break;
        }
      } catch (const std::invalid_argument& e) {
        throw InputError(at, "where", std::string(e.what()) + " in \"" + cond.text() + "\"");
      }
    }
    if (keep) {
      p.index = points.size();
      points.push_back(std::move(p));
    }

    // Advance the odometer, last axis fastest.
    std::size_t a = sweep.axes.size();
    while (a > 0) {
      --a;
      if (++step[a] < sweep.axes[a].values.size()) break;
      step[a] = 0;
      if (a == 0) return points;
    }
    if (sweep.axes.empty()) return points;
  }
}

}  // namespace dtsim::config
