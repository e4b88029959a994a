// stiffgrad — MJCF loader: XML files, includes and strict attribute reading.
#include "mjcf/xml.hpp"

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace stiffgrad {

namespace {
// "file:line: message"; line 0 means the file as a whole (it could not be opened): no ":0" that
// would read as a position. Appended piecewise (GCC 12's -Wrestrict false positive on "x" + s).
std::string located(const std::string& file, int line, const std::string& message) {
  std::string out = file;
  if (line > 0) out.append(1, ':').append(std::to_string(line));
  out.append(": ").append(message);
  return out;
}
}  // namespace

MjcfError::MjcfError(std::string file, int line, const std::string& message)
    : std::runtime_error(located(file, line, message)),
      file_(std::move(file)),
      line_(line),
      message_(message) {}

namespace mjcf {
namespace {

// A hostile file could include a small file from many places (an exponential tree of
// includes without any cycle); bound the total work instead of only the depth.
constexpr int kMaxIncludes = 1000;
constexpr int kMaxIncludeDepth = 32;

bool is_space(char c) { return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'; }

std::vector<std::string_view> split_ws(std::string_view s) {
  std::vector<std::string_view> out;
  size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && is_space(s[i])) ++i;
    size_t j = i;
    while (j < s.size() && !is_space(s[j])) ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }

// True when `t` is a plain decimal literal. Rejects what strtod would also take but MJCF
// files never mean: "nan", "inf", hexadecimal floats, and trailing junk such as "1.2.3".
bool is_decimal_literal(std::string_view t) {
  size_t i = 0, n = t.size();
  if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
  size_t digits = 0;
  while (i < n && is_digit(t[i])) ++i, ++digits;
  if (i < n && t[i] == '.') {
    ++i;
    while (i < n && is_digit(t[i])) ++i, ++digits;
  }
  if (digits == 0) return false;
  if (i < n && (t[i] == 'e' || t[i] == 'E')) {
    ++i;
    if (i < n && (t[i] == '+' || t[i] == '-')) ++i;
    size_t exp_digits = 0;
    while (i < n && is_digit(t[i])) ++i, ++exp_digits;
    if (exp_digits == 0) return false;
  }
  return i == n;
}

// What went wrong, in words: tinyxml2's own ErrorStr() names its enum and internal state
// ("Error=XML_ERROR_EMPTY_DOCUMENT ErrorID=13 ...").
std::string xml_error_text(const tinyxml2::XMLDocument& doc) {
  switch (doc.ErrorID()) {
    case tinyxml2::XML_ERROR_EMPTY_DOCUMENT:
      return "not an MJCF file: it holds no XML element (empty, or only whitespace and comments); expected <mujoco>";
    case tinyxml2::XML_ERROR_MISMATCHED_ELEMENT:
      return "XML parse error: a closing tag does not match the element it closes (or an element is never closed)";
    case tinyxml2::XML_ERROR_PARSING_ELEMENT:
      return "XML parse error: malformed element (an unclosed '<', a bad tag name, or an element left open at the "
             "end of the file)";
    case tinyxml2::XML_ERROR_PARSING_ATTRIBUTE:
      return "XML parse error: malformed attribute (expected name=\"value\")";
    case tinyxml2::XML_ERROR_PARSING_TEXT:
      return "XML parse error: text where an element belongs (or malformed text between elements); expected <mujoco>";
    case tinyxml2::XML_ERROR_PARSING_CDATA: return "XML parse error: malformed CDATA section";
    case tinyxml2::XML_ERROR_PARSING_COMMENT: return "XML parse error: unterminated or malformed comment";
    case tinyxml2::XML_ERROR_PARSING_DECLARATION: return "XML parse error: malformed <?xml ...?> declaration";
    case tinyxml2::XML_ERROR_PARSING_UNKNOWN: return "XML parse error: malformed <!...> markup";
    default: return "XML parse error: the file is not well-formed XML";
  }
}

// A binary file (a mesh, an archive, a compiled model) given where an MJCF file belongs:
// tinyxml2 would report a parse error somewhere inside it. A NUL byte, or a control character
// other than whitespace, in the first 4 KiB says "not text".
bool looks_binary(std::string_view text, std::size_t* at) {
  const std::size_t n = std::min<std::size_t>(text.size(), 4096);
  for (std::size_t i = 0; i < n; ++i) {
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == 0 || (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != '\v') || c == 0x7f) {
      *at = i;
      return true;
    }
  }
  return false;
}

// Parses `text` into `doc`, throwing MjcfError(shown, line, words) when it is not XML.
void parse_xml(tinyxml2::XMLDocument& doc, std::string_view text, const std::string& shown) {
  std::size_t at = 0;
  if (looks_binary(text, &at))
    throw MjcfError(shown, 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(at), '\n')),
                    "not an MJCF file: binary data (byte " + std::to_string(at) + " is a control character); expected "
                    "an XML text file starting with <mujoco>");
  if (doc.Parse(text.data(), text.size()) != tinyxml2::XML_SUCCESS)
    throw MjcfError(shown, std::max(1, doc.ErrorLineNum()), xml_error_text(doc));
}

}  // namespace

bool parse_double(std::string_view token, double& out) {
  if (!is_decimal_literal(token)) return false;
  std::string buf(token);
  errno = 0;
  char* end = nullptr;
  double v = std::strtod(buf.c_str(), &end);
  if (end != buf.c_str() + buf.size()) return false;
  // Overflow gives +-inf (ERANGE): "1e400" is as wrong as "abc". Underflow to a tiny or zero
  // value is harmless and accepted.
  if (!std::isfinite(v)) return false;
  out = v;
  return true;
}

bool parse_int(std::string_view token, int& out) {
  size_t i = 0;
  if (i < token.size() && (token[i] == '+' || token[i] == '-')) ++i;
  if (i == token.size()) return false;
  for (size_t k = i; k < token.size(); ++k)
    if (!is_digit(token[k])) return false;
  std::string buf(token);
  errno = 0;
  long long v = std::strtoll(buf.c_str(), nullptr, 10);
  if (errno == ERANGE || v < INT_MIN || v > INT_MAX) return false;
  out = static_cast<int>(v);
  return true;
}

// ---------------------------------------------------------------- Elem

void Elem::fail(const std::string& message) const { throw MjcfError(file(), line(), message); }

void Elem::unsupported() const { fail("unsupported <" + std::string(tag()) + ">"); }

void Elem::unsupported_attribute(const char* name) const {
  fail("unsupported attribute '" + std::string(name) + "' of <" + std::string(tag()) + ">");
}

std::string Elem::str(const char* name, const std::string& fallback) const {
  const char* v = el->Attribute(name);
  return v ? std::string(v) : fallback;
}

int Elem::doubles(const char* name, double* out, int max, int min) const {
  const char* v = el->Attribute(name);
  if (!v) return 0;
  auto tokens = split_ws(v);
  const std::string where = "attribute '" + std::string(name) + "' of <" + std::string(tag()) + ">";
  if (tokens.empty()) fail("empty " + where);
  if (static_cast<int>(tokens.size()) > max)
    fail(where + " has too many numbers (" + std::to_string(tokens.size()) + ", at most " +
         std::to_string(max) + ")");
  if (static_cast<int>(tokens.size()) < min)
    fail(where + " has too few numbers (" + std::to_string(tokens.size()) + ", expected " +
         std::to_string(min) + ")");
  double tmp[16];
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (!parse_double(tokens[i], tmp[i]))
      fail("bad number '" + std::string(tokens[i]) + "' in " + where);
  }
  std::copy(tmp, tmp + tokens.size(), out);
  return static_cast<int>(tokens.size());
}

bool Elem::numbers(const char* name, std::vector<double>& out) const {
  const char* v = el->Attribute(name);
  if (!v) return false;
  out.clear();
  for (std::string_view token : split_ws(v)) {
    double d;
    if (!parse_double(token, d))
      fail("bad number '" + std::string(token) + "' in attribute '" + name + "' of <" +
           std::string(tag()) + ">");
    out.push_back(d);
  }
  return true;
}

bool Elem::integer(const char* name, int& out) const {
  const char* v = el->Attribute(name);
  if (!v) return false;
  auto tokens = split_ws(v);
  const std::string where = "attribute '" + std::string(name) + "' of <" + std::string(tag()) + ">";
  if (tokens.size() != 1) fail(where + " must be one integer, got '" + std::string(v) + "'");
  if (!parse_int(tokens[0], out)) fail("bad integer '" + std::string(tokens[0]) + "' in " + where);
  return true;
}

bool Elem::keyword(const char* name, std::initializer_list<const char*> words, int& out) const {
  const char* v = el->Attribute(name);
  if (!v) return false;
  int i = 0;
  for (const char* w : words) {
    if (std::string_view(v) == w) {
      out = i;
      return true;
    }
    ++i;
  }
  std::string list;
  for (const char* w : words) list += std::string(list.empty() ? "" : ", ") + w;
  fail("invalid value '" + std::string(v) + "' of attribute '" + name + "' of <" +
       std::string(tag()) + "> (expected one of: " + list + ")");
}

bool Elem::boolean(const char* name, int& out) const { return keyword(name, {"false", "true"}, out); }

bool Elem::tristate(const char* name, int& out) const {
  return keyword(name, {"false", "true", "auto"}, out);
}

bool Elem::enable(const char* name, int& out) const {
  return keyword(name, {"disable", "enable"}, out);
}

void Elem::check_attributes(std::initializer_list<const char*> known) const {
  for (const tinyxml2::XMLAttribute* a = el->FirstAttribute(); a; a = a->Next()) {
    bool ok = false;
    for (const char* k : known)
      if (std::string_view(a->Name()) == k) ok = true;
    if (!ok) unsupported_attribute(a->Name());
  }
}

void Elem::check_attributes(const std::vector<std::string_view>& known) const {
  for (const tinyxml2::XMLAttribute* a = el->FirstAttribute(); a; a = a->Next()) {
    if (std::find(known.begin(), known.end(), std::string_view(a->Name())) == known.end())
      unsupported_attribute(a->Name());
  }
}

// ---------------------------------------------------------------- IncludeContext

namespace {

std::string parent_dir(const std::string& path) {
  std::filesystem::path p(path);
  return p.has_parent_path() ? p.parent_path().string() : std::string(".");
}

void check_root(const Source& s) {
  const tinyxml2::XMLElement* root = s.doc.RootElement();
  if (!root)
    throw MjcfError(s.path, 1, "not an MJCF file: it holds no XML element (only a declaration, whitespace or comments); expected <mujoco>");
  if (std::string_view(root->Name()) != "mujoco")
    throw MjcfError(s.path, root->GetLineNum(),
                    "root element is <" + std::string(root->Name()) + ">, expected <mujoco>");
  if (const tinyxml2::XMLElement* extra = root->NextSiblingElement())
    throw MjcfError(s.path, extra->GetLineNum(), "more than one root element");
}

}  // namespace

const Source& IncludeContext::load_main_file(const std::string& path) {
  return parse_file(path, path, nullptr);
}

const Source& IncludeContext::load_main_string(const std::string& xml,
                                               const std::string& virtual_path) {
  auto s = std::make_unique<Source>();
  s->path = virtual_path;
  s->dir = parent_dir(virtual_path);
  parse_xml(s->doc, xml, virtual_path);
  check_root(*s);
  sources_.push_back(std::move(s));
  std::error_code ec;
  auto canon = std::filesystem::weakly_canonical(virtual_path, ec);
  stack_.push_back(ec ? virtual_path : canon.string());
  return *sources_.back();
}

const Source& IncludeContext::parse_file(const std::string& path, const std::string& shown,
                                         const Elem* from) {
  auto s = std::make_unique<Source>();
  s->path = shown;
  s->dir = parent_dir(path);
  // Read the file ourselves so that a directory or unreadable path is a clean error.
  std::error_code ec;
  const std::filesystem::file_status st = std::filesystem::status(path, ec);
  std::ifstream in(path, std::ios::binary);
  if (!std::filesystem::is_regular_file(st) || !in) {
    const std::string why = !std::filesystem::exists(st)          ? "no such file"
                            : std::filesystem::is_directory(st)   ? "is a directory, not an MJCF file"
                            : !std::filesystem::is_regular_file(st) ? "not a regular file"
                                                                  : "cannot read it (permission denied?)";
    if (from) from->fail("cannot open included file '" + path + "': " + why);
    throw MjcfError(shown, 0, why);
  }
  std::stringstream buf;
  buf << in.rdbuf();
  const std::string text = buf.str();
  parse_xml(s->doc, text, shown);
  check_root(*s);
  sources_.push_back(std::move(s));
  if (!from) {
    auto canon = std::filesystem::weakly_canonical(path, ec);
    stack_.push_back(ec ? path : canon.string());
  }
  return *sources_.back();
}

void IncludeContext::for_each_child(const Elem& parent,
                                    const std::function<void(const Elem&)>& fn) {
  for (const tinyxml2::XMLElement* c = parent.el->FirstChildElement(); c;
       c = c->NextSiblingElement()) {
    Elem child{c, parent.src};
    if (child.tag() != "include") {
      fn(child);
      continue;
    }
    child.check_attributes({"file"});
    if (c->FirstChildElement()) child.fail("<include> must not have child elements");
    const char* file = c->Attribute("file");
    if (!file || !*file) child.fail("<include> needs a 'file' attribute");
    // Relative to the directory of the file that contains the <include>.
    std::filesystem::path p(file);
    std::string full = (p.is_absolute() ? p : std::filesystem::path(parent.src->dir) / p)
                           .lexically_normal()
                           .string();
    std::error_code ec;
    auto canon = std::filesystem::weakly_canonical(full, ec);
    std::string key = ec ? full : canon.string();
    if (std::find(stack_.begin(), stack_.end(), key) != stack_.end())
      child.fail("recursive include of '" + std::string(file) + "'");
    if (static_cast<int>(stack_.size()) > kMaxIncludeDepth) child.fail("includes nested too deeply");
    if (++total_includes_ > kMaxIncludes) child.fail("too many includes");
    const Source& inc = parse_file(full, full, &child);
    stack_.push_back(key);
    Elem root{inc.doc.RootElement(), &inc};
    // The included <mujoco> may carry model="..." like any model file; nothing else.
    root.check_attributes({"model"});
    for_each_child(root, fn);
    stack_.pop_back();
  }
}

}  // namespace mjcf
}  // namespace stiffgrad
