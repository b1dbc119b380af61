#include "tests/emulators/azure/arm_util.h"

#include <cctype>
#include <map>

namespace plinth::azure_emulator {

Response arm_error(int status, const std::string& code, const std::string& message, const std::string& target) {
  json error = {{"code", code}, {"message", message}};
  if (!target.empty()) error["target"] = target;
  return json_response(status, {{"error", error}});
}

Response invalid_content(const std::string& body) {
  std::string why;
  try {
    json parsed = json::parse(body);
    (void)parsed;
    why = "the request content is not a JSON object";
  } catch (const json::parse_error& e) {
    why = e.what();
  }
  return arm_error(400, "InvalidRequestContent",
                   "The request content was invalid and could not be deserialized: '" + why + "'.");
}

std::vector<std::string> segments(const std::string& path) {
  std::vector<std::string> out;
  size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    size_t j = path.find('/', i);
    if (j == std::string::npos) j = path.size();
    if (j > i) out.push_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

std::string url_encode(const std::string& s) {
  static const char hex[] = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~' || c == '$') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += hex[c >> 4];
      out += hex[c & 15];
    }
  }
  return out;
}

bool Filter::matches(const json& m) const {
  std::string tag_name;
  for (const auto& [field, value] : clauses) {
    if (field == "resourcetype" && !iequals(m.value("type", ""), value)) return false;
    if (field == "name" && !iequals(m.value("name", ""), value)) return false;
    if (field == "location" && !iequals(m.value("location", ""), value)) return false;
    if (field == "resourcegroup") {
      auto parts = segments(m.value("id", ""));
      if (parts.size() < 4 || !iequals(parts[3], value)) return false;
    }
    if (field == "tagname") {
      tag_name = value;
      if (!m.contains("tags") || !m["tags"].is_object() || !m["tags"].contains(value)) return false;
    }
  }
  for (const auto& [field, value] : clauses)
    if (field == "tagvalue") {
      if (tag_name.empty()) return false;
      const json& v = m["tags"][tag_name];
      if (!v.is_string() || v.get<std::string>() != value) return false;
    }
  return true;
}

std::string parse_filter(const std::string& text, Filter& out) {
  out = Filter{};
  if (text.empty()) return "";
  std::string rest = text;
  while (!rest.empty()) {
    std::string lower_rest = lower(rest);
    size_t cut = lower_rest.find(" and ");
    std::string clause = rest.substr(0, cut);
    rest = cut == std::string::npos ? "" : rest.substr(cut + 5);
    size_t eq = lower(clause).find(" eq ");
    if (eq == std::string::npos) return "Invalid $filter '" + text + "' specified in the query string.";
    std::string field = clause.substr(0, eq);
    std::string value = clause.substr(eq + 4);
    while (!field.empty() && field.front() == ' ') field.erase(0, 1);
    while (!value.empty() && value.back() == ' ') value.pop_back();
    if (value.size() < 2 || value.front() != '\'' || value.back() != '\'')
      return "Invalid $filter '" + text + "' specified in the query string.";
    value = value.substr(1, value.size() - 2);
    field = lower(field);
    if (field != "resourcetype" && field != "name" && field != "location" && field != "resourcegroup" &&
        field != "tagname" && field != "tagvalue")
      return "Invalid $filter '" + text +
             "' specified in the query string: the emulator filters on resourceType, "
             "resourceGroup, name, location, tagName and tagValue.";
    if (field == "tagname" || field == "tagvalue") out.by_tag = true;
    out.clauses.push_back({field, value});
  }
  return "";
}

const std::vector<VmSize>& builtin_sizes() {
  static const std::vector<VmSize> sizes = {
      {"Standard_A1_v2", 1, "standardAv2Family", false},
      {"Standard_B2s", 2, "standardBSFamily", false},
      {"Standard_D2s_v3", 2, "standardDSv3Family", true},
      {"Standard_D4s_v3", 4, "standardDSv3Family", true},
      {"Standard_D2s_v5", 2, "standardDSv5Family", true},
      {"Standard_D4s_v5", 4, "standardDSv5Family", true},
      {"Standard_D8s_v5", 8, "standardDSv5Family", true},
      {"Standard_NC24ads_A100_v4", 24, "StandardNCADSA100v4Family", true},
      {"Standard_NC48ads_A100_v4", 48, "StandardNCADSA100v4Family", true},
      {"Standard_NC96ads_A100_v4", 96, "StandardNCADSA100v4Family", true},
      {"Standard_NC40ads_H100_v5", 40, "standardNCadsH100v5Family", true},
      {"Standard_NC80adis_H100_v5", 80, "standardNCadsH100v5Family", true},
      {"Standard_ND96asr_v4", 96, "standardNDASv4_A100Family", true},
      {"Standard_ND96amsr_A100_v4", 96, "standardNDAMSv4_A100Family", true},
      {"Standard_ND96isr_H100_v5", 96, "standardNDSH100v5Family", true},
      {"Standard_ND96isr_H200_v5", 96, "standardNDSH200v5Family", true},
  };
  return sizes;
}

std::string location_display_name(const std::string& location) {
  static const std::map<std::string, std::string> names = {{"eastus", "East US"},
                                                           {"eastus2", "East US 2"},
                                                           {"westus", "West US"},
                                                           {"westus2", "West US 2"},
                                                           {"westus3", "West US 3"},
                                                           {"centralus", "Central US"},
                                                           {"southcentralus", "South Central US"},
                                                           {"northeurope", "North Europe"},
                                                           {"westeurope", "West Europe"},
                                                           {"swedencentral", "Sweden Central"},
                                                           {"uksouth", "UK South"},
                                                           {"japaneast", "Japan East"}};
  auto it = names.find(location);
  return it == names.end() ? location : it->second;
}

}  // namespace plinth::azure_emulator
