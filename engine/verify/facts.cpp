// Reading facts: the Prometheus text format, and a Prometheus server's HTTP API.
#include <cmath>
#include <cstdlib>

#include "engine/core/strings.h"
#include "engine/net/http.h"
#include "engine/verify/verify.h"

namespace plinth::verify {
namespace {

bool name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':'; }
bool name_char(char c) { return name_start(c) || (c >= '0' && c <= '9'); }

std::optional<double> number(std::string_view s) {
  if (s == "NaN") return std::nan("");
  if (s == "+Inf" || s == "Inf") return HUGE_VAL;
  if (s == "-Inf") return -HUGE_VAL;
  std::string text(s);
  char* end = nullptr;
  double v = std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size()) return std::nullopt;
  return v;
}

}  // namespace

Result<std::vector<Sample>> parse_text(std::string_view text, const std::string& file) {
  std::vector<Sample> out;
  int line_no = 0;
  size_t pos = 0;
  while (pos < text.size()) {
    size_t eol = text.find('\n', pos);
    if (eol == std::string_view::npos) eol = text.size();
    std::string_view line = text.substr(pos, eol - pos);
    pos = eol + 1;
    ++line_no;
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    size_t i = 0;
    auto skip_space = [&] {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
    };
    skip_space();
    if (i == line.size() || line[i] == '#') continue;
    auto fail = [&](const std::string& what) {
      return Error::invalid(file + ":" + std::to_string(line_no) + ":" + std::to_string(i + 1) + ": " + what +
                            "; expected Prometheus text format lines such as name{label=\"value\"} 1");
    };
    Sample s;
    if (!name_start(line[i])) return fail("a metric name must start with a letter, '_' or ':'");
    size_t start = i;
    while (i < line.size() && name_char(line[i])) ++i;
    s.name = std::string(line.substr(start, i - start));
    skip_space();
    if (i < line.size() && line[i] == '{') {
      ++i;
      while (true) {
        skip_space();
        if (i < line.size() && line[i] == '}') {
          ++i;
          break;
        }
        if (i == line.size() || !name_start(line[i])) return fail("expected a label name or '}'");
        size_t ls = i;
        while (i < line.size() && name_char(line[i])) ++i;
        std::string key(line.substr(ls, i - ls));
        skip_space();
        if (i == line.size() || line[i] != '=') return fail("expected '=' after label " + key);
        ++i;
        skip_space();
        if (i == line.size() || line[i] != '"') return fail("expected '\"' to open the value of label " + key);
        ++i;
        std::string value;
        bool closed = false;
        while (i < line.size()) {
          char c = line[i++];
          if (c == '"') {
            closed = true;
            break;
          }
          if (c == '\\' && i < line.size()) {
            char e = line[i++];
            value += e == 'n' ? '\n' : e;
          } else {
            value += c;
          }
        }
        if (!closed) return fail("the value of label " + key + " is not closed with '\"'");
        if (s.labels.count(key)) return fail("label " + key + " is given twice");
        s.labels[key] = std::move(value);
        skip_space();
        if (i < line.size() && line[i] == ',') ++i;
      }
    }
    skip_space();
    size_t vs = i;
    while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
    auto v = number(line.substr(vs, i - vs));
    if (!v) {
      i = vs;
      return fail("expected a sample value (a number, NaN, +Inf or -Inf)");
    }
    s.value = *v;
    out.push_back(std::move(s));
  }
  return out;
}

const std::vector<std::string>& prometheus_queries() {
  static const std::vector<std::string> q = {
      R"({__name__=~"plinth_.+"})",
      R"(group by (Hostname, gpu, UUID, modelName, DCGM_FI_DRIVER_VERSION, GPU_I_PROFILE, GPU_I_ID) ({__name__=~"DCGM_FI_DEV_.+"}))",
  };
  return q;
}

Result<std::vector<Sample>> query_prometheus(const PrometheusOptions& options) {
  if (options.url.rfind("http://", 0) != 0 && options.url.rfind("https://", 0) != 0)
    return Error::invalid("Prometheus URL '" + options.url + "' must start with http:// or https://");
  std::string base = options.url;
  while (!base.empty() && base.back() == '/') base.pop_back();
  net::ClientOptions co;
  co.ca_bundle = options.ca_bundle;
  co.timeout_ms = options.timeout_ms;
  co.max_body_bytes = 512u << 20;
  net::Client client(co);
  std::vector<Sample> out;
  for (const auto& query : prometheus_queries()) {
    net::Request req;
    req.url = base + "/api/v1/query?query=" + net::percent_encode(query);
    if (!options.token.empty()) req.headers["Authorization"] = "Bearer " + options.token;
    auto resp = client.send(req);
    if (!resp) return Error{resp.error().kind, "querying Prometheus: " + resp.error().message, 0};
    nlohmann::json body = nlohmann::json::parse(resp->body, nullptr, false);
    const std::string where = "Prometheus at " + base + " (GET /api/v1/query, HTTP " + std::to_string(resp->status) + ")";
    if (body.is_discarded() || !body.is_object())
      return Error::invalid(where + " did not answer with the JSON of its HTTP API; is this the Prometheus server's base URL?");
    if (body.value("status", "") != "success")
      return Error::invalid(where + " answered " + body.value("errorType", std::string("an error")) + ": " +
                            body.value("error", std::string("(no message)")));
    const auto& data = body["data"];
    if (!data.is_object() || data.value("resultType", "") != "vector" || !data["result"].is_array())
      return Error::invalid(where + " answered a result that is not an instant vector");
    for (const auto& r : data["result"]) {
      if (!r.is_object() || !r["metric"].is_object() || !r["value"].is_array() || r["value"].size() != 2 ||
          !r["value"][1].is_string())
        return Error::invalid(where + " answered a series without metric labels and a [time, \"value\"] pair");
      Sample s;
      for (const auto& [k, v] : r["metric"].items())
        if (v.is_string()) s.labels[k] = v.get<std::string>();
      s.name = s.labels.count("__name__") ? s.labels["__name__"] : "dcgm_gpu";
      s.labels.erase("__name__");
      auto v = number(r["value"][1].get<std::string>());
      s.value = v ? *v : std::nan("");
      out.push_back(std::move(s));
    }
  }
  return out;
}

}  // namespace plinth::verify
