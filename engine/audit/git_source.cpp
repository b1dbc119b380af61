#include "engine/audit/git_source.h"

#include <algorithm>
#include <filesystem>

#include "engine/core/strings.h"

namespace plinth::audit {

namespace git {

void init() {
  static const int once = git_libgit2_init();
  (void)once;
}

std::string last_error() {
  const git_error* e = git_error_last();
  return e && e->message ? e->message : "unknown error";
}

Result<Repository> open_containing(const std::string& path) {
  init();
  namespace fs = std::filesystem;
  std::error_code ec;
  fs::path start = fs::absolute(path, ec);
  if (!fs::is_directory(start, ec)) start = start.parent_path();
  git_repository* raw = nullptr;
  int rc = git_repository_open_ext(&raw, start.c_str(), 0, nullptr);
  if (rc == GIT_ENOTFOUND) return Repository{};
  if (rc < 0) return Error::fatal("cannot open the git repository containing " + path + ": " + last_error());
  return Repository(raw);
}

}  // namespace git

namespace {

namespace fs = std::filesystem;

/// Local and remote-tracking branch names ("main", "origin/main"), sorted.
std::vector<std::string> branch_names(git_repository* repo) {
  std::vector<std::string> names;
  git_branch_iterator* raw = nullptr;
  if (git_branch_iterator_new(&raw, repo, GIT_BRANCH_ALL) < 0) return names;
  git::BranchIterator it(raw);
  git_reference* ref = nullptr;
  git_branch_t type;
  while (git_branch_next(&ref, &type, it.get()) == 0) {
    git::Reference owned(ref);
    const char* name = nullptr;
    if (git_branch_name(&name, owned.get()) == 0 && name) names.emplace_back(name);
  }
  std::sort(names.begin(), names.end());
  return names;
}

std::vector<std::string> tag_names(git_repository* repo) {
  std::vector<std::string> names;
  git_strarray tags{};
  if (git_tag_list(&tags, repo) < 0) return names;
  for (size_t i = 0; i < tags.count; ++i) names.emplace_back(tags.strings[i]);
  git_strarray_dispose(&tags);
  return names;
}

Error unknown_ref(git_repository* repo, const std::string& ref, const std::string& why) {
  std::vector<std::string> branches = branch_names(repo);
  std::vector<std::string> candidates = branches;
  for (auto& t : tag_names(repo)) candidates.push_back(std::move(t));
  std::string msg = "git ref '" + ref + "' not found in " + git_repository_workdir(repo) + " (" + why + ")";
  if (auto m = closest_match(ref, candidates)) msg += "; did you mean '" + *m + "'?";
  constexpr size_t kShown = 8;
  if (branches.empty()) {
    msg += "; the repository has no branches yet";
  } else {
    std::vector<std::string> shown(branches.begin(), branches.begin() + std::min(kShown, branches.size()));
    msg += "; branches: " + join(shown, ", ");
    if (branches.size() > kShown) msg += " and " + std::to_string(branches.size() - kShown) + " more";
  }
  return Error::invalid(msg);
}

/// `path` as a slash-separated path relative to the work tree root, or an
/// error when it lies outside it.
Result<std::string> tree_path(git_repository* repo, const std::string& path) {
  fs::path p(path);
  fs::path rel;
  if (p.is_absolute()) {
    std::error_code ec;
    fs::path root = fs::weakly_canonical(git_repository_workdir(repo), ec);
    rel = fs::weakly_canonical(p, ec).lexically_relative(root);
  } else {
    rel = p.lexically_normal();
  }
  std::string s = rel.generic_string();
  if (s.empty() || s == "." || s.rfind("..", 0) == 0)
    return Error::invalid(path + " is not inside the git work tree " + git_repository_workdir(repo));
  return s;
}

}  // namespace

Result<Snapshot> read_at_ref(const std::string& repo_path, const std::string& ref,
                             const std::vector<std::string>& paths) {
  auto opened = git::open_containing(repo_path);
  if (!opened) return opened.error();
  git::Repository repo = std::move(opened.value());
  if (!repo) return Error::invalid(repo_path + " is not inside a git repository, so there is no ref '" + ref + "' to compare with");
  if (git_repository_is_bare(repo.get())) return Error::invalid("the git repository at " + repo_path + " is bare; blueprint files are read relative to a work tree");

  git_object* raw = nullptr;
  int rc = git_revparse_single(&raw, repo.get(), ref.c_str());
  if (rc < 0) return unknown_ref(repo.get(), ref, git::last_error());
  git::Object obj(raw);
  git_object* peeled = nullptr;
  if (git_object_peel(&peeled, obj.get(), GIT_OBJECT_COMMIT) < 0)
    return Error::invalid("git ref '" + ref + "' does not name a commit: " + git::last_error());
  git::Commit commit(reinterpret_cast<git_commit*>(peeled));
  git_tree* tree_raw = nullptr;
  if (git_commit_tree(&tree_raw, commit.get()) < 0)
    return Error::fatal("cannot read the tree of " + ref + ": " + git::last_error());
  git::Tree tree(tree_raw);

  Snapshot snap;
  snap.ref = ref;
  snap.commit = git_oid_tostr_s(git_commit_id(commit.get()));
  for (const auto& path : paths) {
    auto rel = tree_path(repo.get(), path);
    if (!rel) return rel.error();
    git_tree_entry* entry_raw = nullptr;
    rc = git_tree_entry_bypath(&entry_raw, tree.get(), rel->c_str());
    if (rc == GIT_ENOTFOUND) {
      snap.absent.push_back(path);
      continue;
    }
    if (rc < 0) return Error::fatal("cannot look up " + *rel + " at " + ref + ": " + git::last_error());
    git::TreeEntry entry(entry_raw);
    if (git_tree_entry_type(entry.get()) != GIT_OBJECT_BLOB)
      return Error::invalid(*rel + " is not a file at " + ref + "; give blueprint files, not directories");
    git_blob* blob_raw = nullptr;
    if (git_blob_lookup(&blob_raw, repo.get(), git_tree_entry_id(entry.get())) < 0)
      return Error::fatal("cannot read " + *rel + " at " + ref + ": " + git::last_error());
    git::Blob blob(blob_raw);
    const char* data = static_cast<const char*>(git_blob_rawcontent(blob.get()));
    snap.docs.emplace_back(path, std::string(data, static_cast<size_t>(git_blob_rawsize(blob.get()))));
  }
  return snap;
}

}  // namespace plinth::audit
