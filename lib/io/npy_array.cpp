#include "io/npy_array.hpp"

#include <algorithm>
#include <array>
#include <cctype>
#include <cstring>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include "core/error.hpp"
#include "io/durable_file.hpp"
#include "io/pread_file.hpp"

namespace pleshard {

namespace {

constexpr std::string_view k_magic = "\x93NUMPY";
// NumPy's np.load refuses longer headers by default too (max_header_size).
constexpr std::uint64_t k_max_header_bytes = 10000;

std::uint64_t read_le(std::span<const std::uint8_t> bytes) {
  std::uint64_t value = 0;
  for (std::size_t i = bytes.size(); i-- > 0;) value = (value << 8) | bytes[i];
  return value;
}

// What the header dict says; unset keys stay empty.
struct NpyHeader {
  std::optional<std::string> descr;
  std::optional<bool> fortran_order;
  std::optional<std::vector<std::uint64_t>> shape;
};

// A parser of the header's Python dict literal: {'descr': '<i8', 'fortran_order': False,
// 'shape': (129280,), }. Returns nothing where the text is not such a dict.
class HeaderParser {
 public:
  explicit HeaderParser(std::string_view text) : text_(text) {}

  std::optional<NpyHeader> parse() {
    NpyHeader header;
    if (!accept('{')) return std::nullopt;
    while (!accept('}')) {
      const std::optional<std::string> key = quoted();
      if (!key || !accept(':')) return std::nullopt;
      bool parsed = false;
      if (*key == "descr") {
        header.descr = quoted();
        parsed = header.descr.has_value();
      } else if (*key == "fortran_order") {
        header.fortran_order = boolean();
        parsed = header.fortran_order.has_value();
      } else if (*key == "shape") {
        header.shape = tuple();
        parsed = header.shape.has_value();
      }
      if (!parsed || (!accept(',') && !peek('}'))) return std::nullopt;
    }
    skip_space();
    return pos_ == text_.size() ? std::optional<NpyHeader>(header) : std::nullopt;
  }

 private:
  void skip_space() {
    while (pos_ < text_.size() && std::isspace(static_cast<unsigned char>(text_[pos_]))) ++pos_;
  }
  bool peek(char c) {
    skip_space();
    return pos_ < text_.size() && text_[pos_] == c;
  }
  bool accept(char c) {
    if (!peek(c)) return false;
    ++pos_;
    return true;
  }
  std::optional<std::string> quoted() {
    skip_space();
    if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) return std::nullopt;
    const std::size_t end = text_.find(text_[pos_], pos_ + 1);
    if (end == std::string_view::npos) return std::nullopt;
    std::string value(text_.substr(pos_ + 1, end - pos_ - 1));
    pos_ = end + 1;
    return value;
  }
  std::optional<bool> boolean() {
    skip_space();
    for (const auto& [word, value] : {std::pair{std::string_view("True"), true}, {std::string_view("False"), false}}) {
      if (text_.substr(pos_, word.size()) == word) {
        pos_ += word.size();
        return value;
      }
    }
    return std::nullopt;
  }
  std::optional<std::uint64_t> number() {
    skip_space();
    std::uint64_t value = 0;
    const std::size_t start = pos_;
    for (; pos_ < text_.size() && std::isdigit(static_cast<unsigned char>(text_[pos_])); ++pos_) {
      const auto digit = static_cast<std::uint64_t>(text_[pos_] - '0');
      if (value > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
      value = value * 10 + digit;
    }
    return pos_ > start ? std::optional<std::uint64_t>(value) : std::nullopt;
  }
  // (), (n,) or (n, m, ...), with an optional trailing comma.
  std::optional<std::vector<std::uint64_t>> tuple() {
    std::vector<std::uint64_t> values;
    if (!accept('(')) return std::nullopt;
    while (!accept(')')) {
      const std::optional<std::uint64_t> value = number();
      if (!value) return std::nullopt;
      values.push_back(*value);
      if (!accept(',') && !peek(')')) return std::nullopt;
    }
    return values;
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string text = "(";
  for (std::size_t i = 0; i < shape.size(); ++i) text += (i ? ", " : "") + std::to_string(shape[i]);
  return text + (shape.size() == 1 ? ",)" : ")");
}

// Bytes per value of a supported dtype; refuses the others.
std::size_t value_bytes(const std::string& where, const std::string& descr) {
  if (descr == "<i4") return 4;
  if (descr == "<i8") return 8;
  if (descr == ">i4" || descr == ">i8")
    throw InputError(where + "dtype '" + descr + "' is big-endian; expected little-endian '<i4' or '<i8'");
  throw InputError(where + "dtype '" + descr + "' is not int32 or int64 ('<i4' or '<i8')");
}

}  // namespace

std::vector<std::int64_t> read_npy_integers(const std::filesystem::path& path) {
  const std::string where = path.string() + ": ";
  const PreadFile file(path);
  const std::uint64_t file_bytes = std::filesystem::file_size(path);

  // Magic, version, then the header's length: 2 bytes in version 1.0, 4 in 2.0 and 3.0.
  std::array<std::uint8_t, 12> prefix{};
  const auto prefix_bytes = static_cast<std::size_t>(std::min<std::uint64_t>(file_bytes, prefix.size()));
  file.read_exact(0, std::span(prefix).first(prefix_bytes));
  if (prefix_bytes < 10 || std::memcmp(prefix.data(), k_magic.data(), k_magic.size()) != 0)
    throw InputError(where + "not a NumPy .npy file (no \\x93NUMPY magic at its start)");
  const int major = prefix[6];
  const int minor = prefix[7];
  if (major < 1 || major > 3 || minor != 0)
    throw InputError(where + ".npy format version " + std::to_string(major) + "." + std::to_string(minor) +
                     " is not supported (1.0, 2.0 or 3.0)");
  const std::size_t length_bytes = major == 1 ? 2 : 4;
  if (prefix_bytes < 8 + length_bytes) throw InputError(where + "the file ends inside its .npy header");
  const std::uint64_t header_bytes = read_le(std::span(prefix).subspan(8, length_bytes));
  const std::uint64_t data_start = 8 + length_bytes + header_bytes;
  if (header_bytes > k_max_header_bytes)
    throw InputError(where + ".npy header of " + std::to_string(header_bytes) + " bytes is longer than " +
                     std::to_string(k_max_header_bytes));
  if (data_start > file_bytes) throw InputError(where + "the file ends inside its .npy header");

  std::string text(header_bytes, '\0');
  file.read_exact(8 + length_bytes, std::span(reinterpret_cast<std::uint8_t*>(text.data()), text.size()));
  const std::optional<NpyHeader> header = HeaderParser(text).parse();
  if (!header) throw InputError(where + "cannot parse the .npy header");
  if (!header->descr || !header->fortran_order || !header->shape)
    throw InputError(where + ".npy header lacks one of 'descr', 'fortran_order' and 'shape'");
  const std::size_t width = value_bytes(where, *header->descr);
  if (*header->fortran_order) throw InputError(where + "array is in Fortran order; expected C order");
  if (header->shape->size() != 1)
    throw InputError(where + "shape " + shape_text(*header->shape) + " is not one-dimensional");

  const std::uint64_t count = header->shape->front();
  const std::uint64_t data_bytes = file_bytes - data_start;
  if (data_bytes % width != 0 || data_bytes / width != count)
    throw InputError(where + "holds " + std::to_string(data_bytes) + " bytes of data; its header says " +
                     std::to_string(count) + " values of " + std::to_string(width) + " bytes");
  std::vector<std::uint8_t> data(static_cast<std::size_t>(data_bytes));
  file.read_exact(data_start, data);
  std::vector<std::int64_t> values(static_cast<std::size_t>(count));
  for (std::size_t i = 0; i < values.size(); ++i) {
    const std::uint64_t raw = read_le(std::span(data).subspan(i * width, width));
    // Sign-extend 32-bit values.
    values[i] = width == 4 ? static_cast<std::int32_t>(raw) : static_cast<std::int64_t>(raw);
  }
  return values;
}

void write_npy_integers(const std::filesystem::path& path, std::span<const std::int64_t> values) {
  const bool narrow = std::all_of(values.begin(), values.end(), [](std::int64_t v) {
    return v >= std::numeric_limits<std::int32_t>::min() && v <= std::numeric_limits<std::int32_t>::max();
  });
  const int width = narrow ? 4 : 8;
  std::string header = std::string("{'descr': '<i") + std::to_string(width) + "', 'fortran_order': False, 'shape': (" +
                       std::to_string(values.size()) + ",), }";
  // Magic, version, length and header padded with spaces and a newline to 64 bytes.
  const std::size_t prefix = k_magic.size() + 2 + 2;
  header.append((64 - (prefix + header.size() + 1) % 64) % 64, ' ');
  header += '\n';
  std::string bytes(k_magic);
  bytes += '\x01';
  bytes += '\x00';
  bytes += static_cast<char>(header.size() & 0xFF);
  bytes += static_cast<char>(header.size() >> 8);
  bytes += header;
  for (const std::int64_t v : values)
    for (int i = 0; i < width; ++i) bytes += static_cast<char>((static_cast<std::uint64_t>(v) >> (8 * i)) & 0xFF);
  write_text_file(path, bytes);
}

}  // namespace pleshard
