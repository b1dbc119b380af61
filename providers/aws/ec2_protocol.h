#pragma once
// The EC2 Query protocol (API 2016-11-15), driven by a botocore service model
// (service-2.json): requests are form-encoded parameters (Action, Version,
// then Name.1.Member=value), answers are XML. Values on the C++ side are JSON
// in botocore's member names, exactly what boto3 takes and returns
// ({"InstanceIds": ["i-1"]}, {"Reservations": [{"Instances": [...]}]}).
//
// Both directions are implemented so one module serves the client (a
// provider: serialize_query + parse_response + parse_error) and the server
// (the emulator: parse_query + serialize_response + error_xml). The rules are
// botocore's EC2Serializer and EC2QueryParser; they are checked against the
// AWS protocol test suite and botocore's response-parsing cases in
// tests/data/third_party/aws-ec2 (tests/providers/aws/ec2_protocol_test.cpp).
#include <functional>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <variant>
#include <vector>

#include "engine/core/result.h"

namespace plinth::aws::ec2 {

using Json = nlohmann::json;

/// A botocore service model: {"metadata": ..., "operations": ..., "shapes": ...}.
/// The full EC2 model is tests/data/third_party/aws-ec2/botocore-model/service-2.json;
/// a client may equally build a small model holding only the shapes it uses
/// (parsing ignores elements a model does not name, as botocore does).
class Model {
 public:
  /// Reads and checks a service-2.json file.
  static Result<Model> load(const std::string& path);
  /// Wraps a parsed model (or just {"shapes": {...}} for protocol tests).
  static Result<Model> from_json(Json model);

  /// The shape called `name`, or nullptr.
  const Json* shape(std::string_view name) const;
  /// The operation called `name` (e.g. "RunInstances"), or nullptr.
  const Json* operation(std::string_view name) const;
  /// The name of an operation's input / output shape; "" when it has none.
  std::string input_shape(std::string_view operation) const;
  std::string output_shape(std::string_view operation) const;
  /// metadata.apiVersion ("2016-11-15").
  std::string api_version() const;
  /// metadata.xmlNamespace with the trailing '/' real answers carry
  /// ("http://ec2.amazonaws.com/doc/2016-11-15/").
  std::string xml_namespace() const;

 private:
  Json model_;
};

/// Query parameters in the order they are sent: (name, value), unencoded.
using QueryParams = std::vector<std::pair<std::string, std::string>>;

struct SerializeOptions {
  /// Fills members marked idempotencyToken that `params` leaves out (RunInstances'
  /// ClientToken), as every SDK does; called once per missing token.
  std::function<std::string()> idempotency_token;
};

/// Flattens `params` (JSON of `input_shape`) into EC2 query parameters, member
/// by member in model order: lists as Name.1, Name.2 (an empty list sends
/// nothing), structures as Name.Member, maps as Name.entry.N.key/value, the
/// name being queryName, else the capitalised locationName, else the member
/// name; booleans true/false, timestamps ISO 8601, blobs base64. An unknown
/// member or a value of the wrong JSON type is an error naming its path.
Result<QueryParams> serialize_query(const Model& model, std::string_view input_shape, const Json& params,
                                    const SerializeOptions& options = {});

/// The form body botocore sends: Action=...&Version=...&params, with names and
/// values percent-encoded (application/x-www-form-urlencoded).
std::string form_body(std::string_view action, std::string_view version, const QueryParams& params);

/// Splits an application/x-www-form-urlencoded body or a query string into
/// decoded name -> value ('+' is a space). A repeated name keeps its last value.
std::map<std::string, std::string> parse_form(std::string_view body);

/// An error in a request's parameters, with EC2's code: UnknownParameter,
/// InvalidParameterValue, MissingParameter.
struct ParameterError {
  std::string code;
  std::string message;
};

/// The server side of serialize_query: builds the JSON of `input_shape` from
/// flat parameters (Action and Version already taken out). Parameters the
/// shape does not name are UnknownParameter (as EC2 answers); a value that is
/// not of the member's type (integer, boolean, enum) is InvalidParameterValue;
/// members the model marks required are MissingParameter.
std::variant<Json, ParameterError> parse_query(const Model& model, std::string_view input_shape,
                                               const std::map<std::string, std::string>& params);

/// Writes the XML answer of `operation`: <OperationResponse xmlns="..."> with
/// <requestId> first, then `value` (JSON of the output shape) member by member
/// in model order; an operation without output answers <return>true</return>
/// like EC2 does. Lists get their wrapper element and <item> members, empty
/// lists an empty wrapper, null members are left out. An unknown member or a
/// value of the wrong type is an error (a bug in the caller), naming its path;
/// so is a string outside its enum when `strict_enums` (real answers do carry
/// values newer or older than a model's enums, so a proxy passes false).
Result<std::string> serialize_response(const Model& model, std::string_view operation, const Json& value,
                                       std::string_view request_id, bool strict_enums = true);

/// How parse_response returns timestamps.
enum class Timestamps {
  Epoch,   ///< seconds since 1970 (a double when fractional), as botocore's tests expect
  AsSent,  ///< the element's text unchanged
};

/// Parses an XML answer into JSON of `output_shape` (botocore's result,
/// without ResponseMetadata). Elements the model does not name are ignored,
/// as botocore ignores them. Malformed XML or a value of the wrong type is an error.
Result<Json> parse_response(const Model& model, std::string_view output_shape, std::string_view xml,
                            Timestamps timestamps = Timestamps::Epoch);

/// The requestId of an answer ("" when it has none).
std::string request_id_of(std::string_view xml);

/// An EC2 error answer.
struct ErrorResponse {
  std::string code;
  std::string message;
  std::string request_id;
  /// The <Error> element parsed with the exception shape named like the code,
  /// when the model has one (protocol tests); otherwise {"Code", "Message"}.
  Json details;
};

/// EC2's error body:
/// <Response><Errors><Error><Code/><Message/></Error></Errors><RequestID/></Response>
std::string error_xml(std::string_view code, std::string_view message, std::string_view request_id);

/// Parses an error body (the format above; also the Query protocol's
/// <ErrorResponse><Error>...</Error><RequestId/> that a proxy may send).
Result<ErrorResponse> parse_error(const Model& model, std::string_view xml, Timestamps timestamps = Timestamps::Epoch);

/// Base64 (RFC 4648, with padding). decode returns nullopt on malformed input.
std::string base64_encode(std::string_view bytes);
std::optional<std::string> base64_decode(std::string_view text);

/// "2014-04-29T18:30:38.000Z" for seconds since 1970 (milliseconds kept).
std::string iso8601(double epoch_seconds);
/// Parses ISO 8601 (with Z or an offset, optional fraction), an HTTP date, or
/// plain epoch seconds.
std::optional<double> parse_timestamp(std::string_view text);

}  // namespace plinth::aws::ec2
