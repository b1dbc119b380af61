#include "engine/audit/provenance.h"

#include <filesystem>
#include <set>

#include "engine/audit/git_source.h"
#include "engine/core/strings.h"

namespace plinth::audit {
namespace {

namespace fs = std::filesystem;

/// Every path `git status` would list (modified, staged, deleted, renamed,
/// untracked), ignored files excepted.
Result<std::set<std::string>> changed_paths(git_repository* repo) {
  git_status_options opts = GIT_STATUS_OPTIONS_INIT;
  opts.show = GIT_STATUS_SHOW_INDEX_AND_WORKDIR;
  opts.flags = GIT_STATUS_OPT_INCLUDE_UNTRACKED | GIT_STATUS_OPT_RECURSE_UNTRACKED_DIRS;
  git_status_list* raw = nullptr;
  if (git_status_list_new(&raw, repo, &opts) < 0)
    return Error::fatal("cannot read the git status of " + std::string(git_repository_workdir(repo)) + ": " +
                        git::last_error());
  git::StatusList list(raw);
  std::set<std::string> paths;
  for (size_t i = 0, n = git_status_list_entrycount(list.get()); i < n; ++i) {
    const git_status_entry* e = git_status_byindex(list.get(), i);
    if (e->status == GIT_STATUS_CURRENT || (e->status & GIT_STATUS_IGNORED)) continue;
    for (const git_diff_delta* d : {e->head_to_index, e->index_to_workdir}) {
      if (!d) continue;
      if (d->old_file.path) paths.insert(d->old_file.path);
      if (d->new_file.path) paths.insert(d->new_file.path);
    }
  }
  return paths;
}

/// The branch HEAD points at when it has no commit yet ("main").
std::string unborn_branch(git_repository* repo) {
  git_reference* raw = nullptr;
  if (git_reference_lookup(&raw, repo, "HEAD") < 0) return "";
  git::Reference head(raw);
  const char* target = git_reference_symbolic_target(head.get());
  std::string name = target ? target : "";
  const std::string prefix = "refs/heads/";
  return name.rfind(prefix, 0) == 0 ? name.substr(prefix.size()) : name;
}

}  // namespace

Result<Provenance> record_provenance(const std::vector<std::string>& blueprint_files) {
  if (blueprint_files.empty()) return Error::invalid("no blueprint files to record the provenance of");
  Provenance p;
  auto opened = git::open_containing(blueprint_files.front());
  if (!opened) return opened.error();
  git::Repository repo = std::move(opened.value());
  if (!repo || git_repository_is_bare(repo.get())) {
    p.files = blueprint_files;
    return p;
  }
  git_repository* r = repo.get();
  p.in_repository = true;
  std::string workdir = git_repository_workdir(r);
  while (workdir.size() > 1 && workdir.back() == '/') workdir.pop_back();
  std::error_code ec;
  fs::path root = fs::weakly_canonical(workdir, ec);
  p.repository = root.string();

  git::Tree head_tree;
  git_reference* head_raw = nullptr;
  int rc = git_repository_head(&head_raw, r);
  if (rc == GIT_EUNBORNBRANCH || rc == GIT_ENOTFOUND) {
    p.unborn = true;
    p.branch = unborn_branch(r);
  } else if (rc < 0) {
    return Error::fatal("cannot read HEAD of the git repository " + p.repository + ": " + git::last_error());
  } else {
    git::Reference head(head_raw);
    git_object* commit_raw = nullptr;
    if (git_reference_peel(&commit_raw, head.get(), GIT_OBJECT_COMMIT) < 0)
      return Error::fatal("cannot resolve HEAD of " + p.repository + " to a commit: " + git::last_error());
    git::Commit commit(reinterpret_cast<git_commit*>(commit_raw));
    p.commit = git_oid_tostr_s(git_commit_id(commit.get()));
    p.branch = git_repository_head_detached(r) == 1 ? "detached" : git_reference_shorthand(head.get());
    git_tree* tree_raw = nullptr;
    if (git_commit_tree(&tree_raw, commit.get()) < 0)
      return Error::fatal("cannot read the tree of HEAD in " + p.repository + ": " + git::last_error());
    head_tree.reset(tree_raw);
  }

  auto changed = changed_paths(r);
  if (!changed) return changed.error();
  p.repository_dirty = !changed->empty();

  for (const auto& file : blueprint_files) {
    fs::path rel = fs::weakly_canonical(fs::absolute(file, ec), ec).lexically_relative(root);
    std::string s = rel.generic_string();
    if (s.empty() || s.rfind("..", 0) == 0) {  // outside the work tree: not reproducible from the commit
      p.files.push_back(file);
      p.dirty_files.push_back(file);
      continue;
    }
    p.files.push_back(s);
    bool in_head = false;
    if (head_tree) {
      git_tree_entry* entry = nullptr;
      in_head = git_tree_entry_bypath(&entry, head_tree.get(), s.c_str()) == 0;
      git::TreeEntry owned(entry);
    }
    if (!in_head || changed->count(s)) p.dirty_files.push_back(s);
  }
  p.files_dirty = !p.dirty_files.empty();
  return p;
}

nlohmann::json to_json(const Provenance& p) {
  return {{"in_repository", p.in_repository}, {"repository", p.repository},  {"commit", p.commit},
          {"branch", p.branch},               {"unborn", p.unborn},          {"files", p.files},
          {"dirty_files", p.dirty_files},     {"files_dirty", p.files_dirty}, {"repository_dirty", p.repository_dirty}};
}

std::string describe(const Provenance& p) {
  if (!p.in_repository) return "not in a git repository";
  std::string s = "git ";
  s += p.unborn ? "(no commit yet)" : p.commit.substr(0, 12);
  s += p.branch == "detached" ? " on a detached HEAD" : " on " + p.branch;
  s += p.files_dirty ? ", uncommitted changes in " + join(p.dirty_files, ", ") : ", blueprint files committed";
  return s;
}

}  // namespace plinth::audit
