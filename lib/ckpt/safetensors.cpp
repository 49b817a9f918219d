#include "ckpt/safetensors.hpp"

#include <algorithm>
#include <array>
#include <cstdio>
#include <cstring>
#include <limits>

#include <nlohmann/json.hpp>

#include "core/band_pipeline.hpp"
#include "core/enum_names.hpp"
#include "core/error.hpp"
#include "io/durable_file.hpp"
#include "io/pread_file.hpp"

namespace pleshard {

namespace {

constexpr EnumNames<StDtype, 16> k_dtypes{{{StDtype::BOOL, "BOOL"},
                                           {StDtype::U8, "U8"},
                                           {StDtype::I8, "I8"},
                                           {StDtype::U16, "U16"},
                                           {StDtype::I16, "I16"},
                                           {StDtype::F16, "F16"},
                                           {StDtype::BF16, "BF16"},
                                           {StDtype::U32, "U32"},
                                           {StDtype::I32, "I32"},
                                           {StDtype::F32, "F32"},
                                           {StDtype::U64, "U64"},
                                           {StDtype::I64, "I64"},
                                           {StDtype::F64, "F64"},
                                           {StDtype::F8_E4M3, "F8_E4M3"},
                                           {StDtype::F8_E5M2, "F8_E5M2"},
                                           {StDtype::F8_E8M0, "F8_E8M0"}}};

std::uint64_t read_le64(const std::uint8_t* p) {
  std::uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | p[i];
  return v;
}

bool checked_mul(std::uint64_t a, std::uint64_t b, std::uint64_t& out) {
  if (a != 0 && b > std::numeric_limits<std::uint64_t>::max() / a) return false;
  out = a * b;
  return true;
}

}  // namespace

const char* to_string(StDtype dtype) { return name_of(k_dtypes, dtype); }
std::optional<StDtype> st_dtype_named(std::string_view name) { return find_value(k_dtypes, name); }

std::size_t dtype_size(StDtype dtype) {
  switch (dtype) {
    case StDtype::BOOL:
    case StDtype::U8:
    case StDtype::I8:
    case StDtype::F8_E4M3:
    case StDtype::F8_E5M2:
    case StDtype::F8_E8M0:
      return 1;
    case StDtype::U16:
    case StDtype::I16:
    case StDtype::F16:
    case StDtype::BF16:
      return 2;
    case StDtype::U32:
    case StDtype::I32:
    case StDtype::F32:
      return 4;
    case StDtype::U64:
    case StDtype::I64:
    case StDtype::F64:
      return 8;
  }
  return 0;
}

std::string StTensor::shape_string() const {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) s += (i ? ", " : "") + std::to_string(shape[i]);
  return s + "]";
}

SafetensorsFile::SafetensorsFile(const std::filesystem::path& path) : file_(path) {
  const auto bytes = file_.bytes();
  const std::string& p = file_.path();
  if (bytes.size() < 8)
    throw InputError(p + ": shorter than the 8-byte header length (" + std::to_string(bytes.size()) + " bytes)");
  const std::uint64_t header_length = read_le64(bytes.data());
  if (header_length > k_safetensors_max_header)
    throw InputError(p + ": header length " + std::to_string(header_length) + " exceeds the 100 MB limit");
  if (header_length > bytes.size() - 8)
    throw InputError(p + ": header length " + std::to_string(header_length) + " runs past the end of the file (" +
                     std::to_string(bytes.size()) + " bytes)");
  const std::string_view header(reinterpret_cast<const char*>(bytes.data() + 8), header_length);
  if (header.empty() || header.front() != '{') throw InputError(p + ": header does not begin with '{'");
  nlohmann::json document;
  try {
    document = nlohmann::json::parse(header);
  } catch (const nlohmann::json::exception& e) {
    throw InputError(p + ": header is not valid JSON: " + e.what());
  }
  if (!document.is_object()) throw InputError(p + ": header is not a JSON object");
  data_start_ = 8 + header_length;
  const std::uint64_t data_size = bytes.size() - data_start_;

  for (const auto& [name, entry] : document.items()) {
    const std::string where = p + ": tensor \"" + name + "\"";
    if (name == "__metadata__") {
      if (!entry.is_object()) throw InputError(p + ": __metadata__ is not an object");
      for (const auto& [key, value] : entry.items()) {
        if (!value.is_string()) throw InputError(p + ": __metadata__ value of \"" + key + "\" is not a string");
        metadata_[key] = value.get<std::string>();
      }
      continue;
    }
    if (!entry.is_object() || !entry.contains("dtype") || !entry.contains("shape") || !entry.contains("data_offsets"))
      throw InputError(where + ": expected an object with dtype, shape and data_offsets");
    StTensor t;
    t.name = name;
    const auto& dtype = entry["dtype"];
    const auto known = dtype.is_string() ? find_value(k_dtypes, dtype.get<std::string>()) : std::nullopt;
    if (!known) throw InputError(where + ": unknown dtype " + dtype.dump());
    t.dtype = *known;
    std::uint64_t elements = 1;
    if (!entry["shape"].is_array()) throw InputError(where + ": shape is not a list");
    for (const auto& dim : entry["shape"]) {
      if (!dim.is_number_unsigned())
        throw InputError(where + ": shape entry " + dim.dump() + " is not a non-negative integer");
      const auto d = dim.get<std::uint64_t>();
      if (d > static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) ||
          !checked_mul(elements, d, elements))
        throw InputError(where + ": shape " + entry["shape"].dump() + " overflows");
      t.shape.push_back(static_cast<std::int64_t>(d));
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets.is_array() || offsets.size() != 2 || !offsets[0].is_number_unsigned() ||
        !offsets[1].is_number_unsigned())
      throw InputError(where + ": data_offsets must be two non-negative integers");
    t.begin = offsets[0].get<std::uint64_t>();
    t.end = offsets[1].get<std::uint64_t>();
    std::uint64_t expected_bytes = 0;
    if (!checked_mul(elements, dtype_size(t.dtype), expected_bytes))
      throw InputError(where + ": byte size of shape " + t.shape_string() + " overflows");
    if (t.end < t.begin || t.end - t.begin != expected_bytes)
      throw InputError(where + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) + "] hold " +
                       std::to_string(t.end - t.begin) + " bytes, but " + std::string(to_string(t.dtype)) + " " +
                       t.shape_string() + " needs " + std::to_string(expected_bytes));
    if (t.end > data_size)
      throw InputError(where + ": data_offsets [" + std::to_string(t.begin) + ", " + std::to_string(t.end) +
                       "] run past the data area of " + std::to_string(data_size) +
                       " bytes (out of bounds, or a truncated file)");
    tensors_.push_back(std::move(t));
  }

  std::vector<std::size_t> order(tensors_.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) {
    return std::tie(tensors_[a].begin, tensors_[a].end) < std::tie(tensors_[b].begin, tensors_[b].end);
  });
  std::uint64_t expected_begin = 0;
  for (std::size_t i : order) {
    const StTensor& t = tensors_[i];
    if (t.begin != expected_begin)
      throw InputError(p + ": tensor \"" + t.name + "\" starts at data offset " + std::to_string(t.begin) +
                       ", expected " + std::to_string(expected_begin) +
                       (t.begin < expected_begin ? " (overlaps the previous tensor)" : " (a hole in the data)"));
    expected_begin = t.end;
  }
  if (expected_begin != data_size)
    throw InputError(p + ": tensors cover " + std::to_string(expected_begin) + " data bytes but the file holds " +
                     std::to_string(data_size) +
                     (expected_begin > data_size ? " (truncated file)" : " (trailing bytes)"));
  for (std::size_t i = 0; i < tensors_.size(); ++i) by_name_[tensors_[i].name] = i;
}

const StTensor* SafetensorsFile::find(const std::string& name) const {
  const auto it = by_name_.find(name);
  return it == by_name_.end() ? nullptr : &tensors_[it->second];
}

std::span<const std::uint8_t> SafetensorsFile::data(const StTensor& tensor) const {
  return file_.bytes().subspan(data_start_ + tensor.begin, tensor.bytes());
}

void write_safetensors(const std::filesystem::path& path, const std::vector<StTensorSource>& tensors,
                       const std::map<std::string, std::string>& metadata,
                       const std::function<void(std::uint64_t)>& progress) {
  nlohmann::json header = nlohmann::json::object();
  if (!metadata.empty()) header["__metadata__"] = metadata;
  std::uint64_t offset = 0;
  std::vector<std::uint64_t> begins;
  std::vector<std::uint64_t> sizes;
  for (const auto& t : tensors) {
    std::uint64_t bytes = dtype_size(t.dtype);
    for (auto d : t.shape) bytes *= static_cast<std::uint64_t>(d);
    header[t.name] = {{"dtype", to_string(t.dtype)}, {"shape", t.shape}, {"data_offsets", {offset, offset + bytes}}};
    begins.push_back(offset);
    sizes.push_back(bytes);
    offset += bytes;
  }
  std::string text = header.dump();
  // The data area from a 4 KiB boundary (the header padded with spaces, as the format
  // allows): tensors whose bytes lie at the page's alignment can be read past the page
  // cache straight into page-aligned memory.
  constexpr std::size_t k_block = k_direct_block_bytes;
  text.append((k_block - (8 + text.size()) % k_block) % k_block, ' ');
  const std::uint64_t data_start = 8 + text.size();

  // Refused before a byte is written, rather than at a full disk halfway (an older file of
  // the same name stays until this one is complete, so both must fit).
  require_free_space(path, data_start + offset, "the checkpoint file");
  PartialFile file(path);
  std::uint8_t length[8];
  for (int i = 0; i < 8; ++i) length[i] = static_cast<std::uint8_t>(text.size() >> (8 * i));
  file.write_at(0, length);
  file.write_at(8, {reinterpret_cast<const std::uint8_t*>(text.data()), text.size()});

  // Groups of tensors written together, band by band: a tensor and those banded with it.
  struct Piece {
    std::size_t tensor;
    std::uint64_t at;  // offset within the tensor
    std::size_t bytes;
    std::size_t buffer_at;
  };
  std::vector<std::vector<Piece>> bands;
  for (std::size_t first = 0; first < tensors.size();) {
    std::size_t last = first + 1;
    while (last < tensors.size() && tensors[last].banded_with_previous) ++last;
    std::size_t band_bytes = 0;
    for (std::size_t i = first; i < last; ++i) band_bytes += std::max<std::size_t>(1, tensors[i].granule);
    const std::uint64_t granules = sizes[first] / std::max<std::size_t>(1, tensors[first].granule);
    for (std::size_t i = first + 1; i < last; ++i)
      if (sizes[i] / std::max<std::size_t>(1, tensors[i].granule) != granules)
        throw SystemError(tensors[i].name + ": banded with a tensor of another length");
    const std::uint64_t per_band = items_per_band(band_bytes);
    for (std::uint64_t g = 0; g < granules || (granules == 0 && g == 0); g += per_band) {
      std::vector<Piece> band;
      std::size_t buffer_at = 0;
      for (std::size_t i = first; i < last; ++i) {
        const std::size_t granule = std::max<std::size_t>(1, tensors[i].granule);
        const auto count = granules == 0 ? 0 : std::min<std::uint64_t>(per_band, granules - g);
        // A tensor that is not whole granules (never with banding) keeps its tail.
        const std::uint64_t at = g * granule;
        const auto bytes = static_cast<std::size_t>(g + count >= granules ? sizes[i] - at : count * granule);
        band.push_back({i, at, bytes, buffer_at});
        buffer_at += bytes;
      }
      bands.push_back(std::move(band));
      if (granules == 0) break;
    }
    first = last;
  }

  std::array<std::vector<std::uint8_t>, 2> buffers;
  std::uint64_t done = 0;
  const auto fill = [&](std::size_t k, std::vector<std::uint8_t>& buffer) {
    const auto& band = bands[k];
    buffer.resize(band.back().buffer_at + band.back().bytes);
    for (const Piece& p : band)
      if (p.bytes != 0) tensors[p.tensor].fill(p.at, {buffer.data() + p.buffer_at, p.bytes});
  };
  const auto write = [&](std::size_t k, const std::vector<std::uint8_t>& buffer) {
    for (const Piece& p : bands[k]) {
      const std::span<const std::uint8_t> bytes(buffer.data() + p.buffer_at, p.bytes);
      // All-zero pieces become holes (sparse files): reads give zeros all the same.
      if (std::any_of(bytes.begin(), bytes.end(), [](std::uint8_t b) { return b != 0; }))
        file.write_at(data_start + begins[p.tensor] + p.at, bytes);
      done += p.bytes;
    }
    if (progress) progress(done);
  };
  overlap_bands(bands.size(), buffers, fill, write);
  file.resize(data_start + offset);  // a trailing hole
  file.commit();
}

}  // namespace pleshard
