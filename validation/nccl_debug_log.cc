#include "validation/nccl_debug_log.h"

#include <cctype>
#include <regex>
#include <set>

#include "validation/nccl_tests_parser.h"
#include "validation/text_fields.h"

namespace dtsim::validation {
namespace {

std::string lower_without_underscores(std::string_view s) {
  std::string out;
  for (char c : s)
    if (c != '_') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

}  // namespace

int64_t NcclTuningChoice::test_size(int ranks) const {
  using collectives::CollectiveKind;
  bool per_rank = collective == CollectiveKind::all_gather ||
                  collective == CollectiveKind::reduce_scatter;
  return per_rank ? nccl_bytes * ranks : nccl_bytes;
}

std::string normalize_nccl_algorithm(std::string_view text) {
  // NCCL_ALGO_* numbering of the versions that printed numbers.
  static constexpr const char* kById[] = {"tree", "ring", "collnet_direct", "collnet_chain",
                                          "nvls", "nvls_tree", "pat"};
  if (auto id = detail::parse_int(text); id && *id >= 0 && *id < 7) return kById[*id];
  std::string k = lower_without_underscores(text);
  if (k == "collnetdirect") return "collnet_direct";
  if (k == "collnetchain") return "collnet_chain";
  if (k == "nvlstree") return "nvls_tree";
  return k;
}

std::string normalize_nccl_protocol(std::string_view text) {
  static constexpr const char* kById[] = {"ll", "ll128", "simple"};
  if (auto id = detail::parse_int(text); id && *id >= 0 && *id < 3) return kById[*id];
  return lower_without_underscores(text);
}

NcclDebugLog parse_nccl_debug_log(std::string_view text) {
  static const std::regex version_re(R"(NCCL version (\S+))");
  static const std::regex comm_re(R"(nRanks (\d+) nNodes (\d+))");
  static const std::regex count_re(R"((\d+) (coll|nvls|p2p|collnet) channels(?! per))");
  static const std::regex ring_re(R"(NCCL INFO (?:Channel|Ring) (\d+)(?:/\d+)? :((?:\s+-?\d+)+)\s*$)");
  static const std::regex trees_re(R"(NCCL INFO Trees((?:\s*\[\d+\]\s*\S+)+))");
  static const std::regex tree_item_re(R"(\[(\d+)\]\s*(\S+))");
  static const std::regex graph_re(
      R"(Pattern (\d+), crossNic (\d+), nChannels (\d+), bw ([\d.]+)/([\d.]+), type (\w+)/(\w+))");
  static const std::regex tuning_re(
      R"(NCCL INFO (\w+): (\d+) Bytes -> Algo (\w+) proto (\w+)(?: channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\})?)");

  NcclDebugLog log;
  std::set<std::pair<int, int64_t>> seen_choice;
  int line_no = 0;
  // Reads one line NCCL printed into `log`.
  auto read_line = [&](const std::string& line, int at) {
    std::smatch m;
    if (log.nccl_version.empty() && std::regex_search(line, m, version_re)) log.nccl_version = m[1];
    if (std::regex_search(line, m, comm_re)) {
      log.ranks = std::stoi(m[1].str());
      log.nodes = std::stoi(m[2].str());
    }
    if (line.find("channels") != std::string::npos) {
      for (auto it = std::sregex_iterator(line.begin(), line.end(), count_re);
           it != std::sregex_iterator(); ++it)
        log.channels.try_emplace((*it)[2].str(), std::stoi((*it)[1].str()));
    }
    if (std::regex_search(line, m, ring_re) && line.find("via") == std::string::npos) {
      int ch = std::stoi(m[1].str());
      if (!log.rings.contains(ch)) {
        std::vector<int> order;
        const std::string ranks_text = m[2].str();
        for (std::string_view t : detail::split_whitespace(ranks_text))
          order.push_back(static_cast<int>(detail::parse_int(t).value()));
        log.rings[ch] = std::move(order);
      }
      return;
    }
    if (std::regex_search(line, m, trees_re)) {
      std::string items = m[1].str();
      for (auto it = std::sregex_iterator(items.begin(), items.end(), tree_item_re);
           it != std::sregex_iterator(); ++it)
        log.trees.try_emplace(std::stoi((*it)[1].str()), (*it)[2].str());
      return;
    }
    if (std::regex_search(line, m, graph_re)) {
      NcclGraph g;
      g.pattern = std::stoi(m[1].str());
      g.cross_nic = m[2].str() != "0";
      g.channels = std::stoi(m[3].str());
      g.bw_intra_gbps = std::stod(m[4].str());
      g.bw_inter_gbps = std::stod(m[5].str());
      g.type_intra = m[6].str();
      g.type_inter = m[7].str();
      g.line = at;
      log.graphs.push_back(g);
      return;
    }
    if (std::regex_search(line, m, tuning_re)) {
      auto kind = parse_collective_name(m[1].str());
      if (!kind) return;  // Send/Recv and others the tuner does not choose for
      NcclTuningChoice c;
      c.collective = *kind;
      c.nccl_bytes = std::stoll(m[2].str());
      c.algorithm = normalize_nccl_algorithm(m[3].str());
      c.protocol = normalize_nccl_protocol(m[4].str());
      if (m[5].matched) {
        c.channel_lo = std::stoi(m[5].str());
        c.channel_hi = std::stoi(m[6].str());
      }
      c.line = at;
      // Every call of a benchmark loop prints the same line; keep the first per size.
      if (seen_choice.insert({static_cast<int>(c.collective), c.nccl_bytes}).second)
        log.choices.push_back(c);
    }
  };
  for (std::string_view raw : detail::split_lines(text)) {
    ++line_no;
    std::string line(strip_launcher_prefix(raw));
    if (line.find("NCCL") == std::string::npos) continue;
    try {
      read_line(line, line_no);
    } catch (const std::exception&) {
      // A number too long for its field (std::stoi's out_of_range): not a line NCCL printed.
    }
  }
  return log;
}

TunerAgreement compare_tuner(const NcclDebugLog& log, int ranks, const Predictor& predict) {
  TunerAgreement a;
  for (const NcclTuningChoice& c : log.choices) {
    int64_t size = c.test_size(ranks);
    if (size <= 0) continue;
    Prediction ours = predict(c.collective, size, ranks);
    if (ours.algorithm.empty()) continue;  // a predictor that does not say what it chose
    ++a.compared;
    if (ours.algorithm != c.algorithm || ours.protocol != c.protocol)
      a.differences.push_back(TunerDifference{c, size, ours});
  }
  return a;
}

}  // namespace dtsim::validation
