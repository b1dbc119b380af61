#include "engine/provider/nocloud.h"

// libisofs declares struct burn_source itself when libburn is not used.
#define LIBISOFS_WITHOUT_LIBBURN 1
#include <libisofs/libisofs.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <mutex>

namespace plinth {
namespace {

// 2000-01-01T00:00:00Z for every timestamp of the image, so equal seeds are equal bytes.
constexpr time_t kSeedTime = 946684800;

std::mutex& iso_mutex() {
  static std::mutex mu;
  return mu;
}

Error iso_error(const std::string& what, int code) {
  return Error::fatal("cannot build the NoCloud seed image: " + what + " failed (libisofs error " +
                         std::to_string(code) + ")");
}

/// Adds `name` with `text` (copied) to `root`, read-only.
int add_file(IsoImage* image, IsoDir* root, const char* name, const std::string& text) {
  auto* buf = static_cast<unsigned char*>(std::malloc(text.size() ? text.size() : 1));
  if (!buf) return ISO_OUT_OF_MEM;
  std::memcpy(buf, text.data(), text.size());
  IsoStream* stream = nullptr;
  if (int rc = iso_memory_stream_new(buf, text.size(), &stream); rc < 0) {
    std::free(buf);
    return rc;
  }
  IsoFile* file = nullptr;
  // The file takes the stream's reference; on failure it is still ours.
  if (int rc = iso_image_add_new_file(image, root, name, stream, &file); rc < 0) {
    iso_stream_unref(stream);
    return rc;
  }
  iso_node_set_permissions(reinterpret_cast<IsoNode*>(file), 0444);
  iso_node_set_mtime(reinterpret_cast<IsoNode*>(file), kSeedTime);
  iso_node_set_atime(reinterpret_cast<IsoNode*>(file), kSeedTime);
  iso_node_set_ctime(reinterpret_cast<IsoNode*>(file), kSeedTime);
  return 1;
}

}  // namespace

std::string nocloud_meta_data(const Resource& node) {
  const std::string name = node_name(node.name, node.index);
  std::string hash;
  if (auto it = node.attributes.find("user_data_hash"); it != node.attributes.end() && it->is_string())
    hash = it->get<std::string>().substr(0, 12);
  return "instance-id: " + name + (hash.empty() ? "" : "-" + hash) + "\nlocal-hostname: " + name + "\n";
}

Result<std::string> nocloud_iso(const NoCloudSeed& seed) {
  // libisofs keeps global state (iso_init) and spawns a writer thread per image;
  // seeds are a few KiB, so one at a time costs nothing.
  std::lock_guard<std::mutex> lock(iso_mutex());
  static const int init = iso_init();
  if (init < 0) return iso_error("iso_init", init);

  IsoImage* raw = nullptr;
  if (int rc = iso_image_new("cidata", &raw); rc < 0) return iso_error("iso_image_new", rc);
  std::unique_ptr<IsoImage, decltype(&iso_image_unref)> image(raw, iso_image_unref);
  iso_image_set_volume_id(image.get(), "cidata");
  IsoDir* root = iso_image_get_root(image.get());
  iso_node_set_mtime(reinterpret_cast<IsoNode*>(root), kSeedTime);
  iso_node_set_atime(reinterpret_cast<IsoNode*>(root), kSeedTime);
  iso_node_set_ctime(reinterpret_cast<IsoNode*>(root), kSeedTime);
  if (int rc = add_file(image.get(), root, "user-data", seed.user_data); rc < 0) return iso_error("adding user-data", rc);
  if (int rc = add_file(image.get(), root, "meta-data", seed.meta_data); rc < 0) return iso_error("adding meta-data", rc);
  if (!seed.network_config.empty())
    if (int rc = add_file(image.get(), root, "network-config", seed.network_config); rc < 0)
      return iso_error("adding network-config", rc);

  IsoWriteOpts* opts_raw = nullptr;
  if (int rc = iso_write_opts_new(&opts_raw, 0); rc < 0) return iso_error("iso_write_opts_new", rc);
  std::unique_ptr<IsoWriteOpts, decltype(&iso_write_opts_free)> opts(opts_raw, iso_write_opts_free);
  iso_write_opts_set_rockridge(opts.get(), 1);
  iso_write_opts_set_joliet(opts.get(), 1);
  iso_write_opts_set_always_gmt(opts.get(), 1);
  iso_write_opts_set_relaxed_vol_atts(opts.get(), 1);  // "cidata" as written, as genisoimage -V does
  iso_write_opts_set_replace_timestamps(opts.get(), 2);
  iso_write_opts_set_default_timestamp(opts.get(), kSeedTime);
  char uuid[] = "2000010100000000";
  iso_write_opts_set_pvd_times(opts.get(), kSeedTime, kSeedTime, 0, 0, uuid);

  burn_source* source = nullptr;
  if (int rc = iso_image_create_burn_source(image.get(), opts.get(), &source); rc < 0)
    return iso_error("iso_image_create_burn_source", rc);
  std::string out;
  unsigned char block[2048];
  int n = 0;
  while ((n = source->read_xt(source, block, sizeof block)) > 0) out.append(reinterpret_cast<char*>(block), n);
  source->free_data(source);
  std::free(source);
  if (n < 0) return iso_error("writing the image", n);
  return out;
}

}  // namespace plinth
