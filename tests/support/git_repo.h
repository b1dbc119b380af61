#pragma once
// A throwaway git repository built with libgit2 (no `git` binary), for tests
// of provenance and `plan --against`. Header-only so that only test
// executables that link libgit2 (through plinth_audit) pull it in.
#include <git2.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>

#include "engine/audit/git_source.h"

namespace plinth::test {

class GitRepo {
 public:
  /// `git init` of `dir` with HEAD on `branch` (no commit yet).
  explicit GitRepo(const std::string& dir, const std::string& branch = "main") : dir_(dir) {
    audit::git::init();
    git_repository_init_options opts = GIT_REPOSITORY_INIT_OPTIONS_INIT;
    opts.flags = GIT_REPOSITORY_INIT_MKPATH;
    opts.initial_head = branch.c_str();
    git_repository* raw = nullptr;
    check(git_repository_init_ext(&raw, dir.c_str(), &opts), "init");
    repo_.reset(raw);
  }

  git_repository* get() const { return repo_.get(); }
  const std::string& dir() const { return dir_; }

  /// Writes `text` to the work tree file `rel` (creating folders); returns its full path.
  std::string write(const std::string& rel, const std::string& text) const {
    std::filesystem::path p = std::filesystem::path(dir_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary) << text;
    return p.string();
  }

  /// `git add rel`.
  void add(const std::string& rel) const {
    audit::git::Index index = open_index();
    check(git_index_add_bypath(index.get(), rel.c_str()), "index add " + rel);
    check(git_index_write(index.get()), "index write");
  }

  /// `git commit -m message` of the index onto HEAD; returns the new commit id (40 hex).
  std::string commit(const std::string& message) const {
    audit::git::Index index = open_index();
    git_oid tree_id, commit_id;
    check(git_index_write_tree(&tree_id, index.get()), "write tree");
    git_tree* tree_raw = nullptr;
    check(git_tree_lookup(&tree_raw, repo_.get(), &tree_id), "tree lookup");
    audit::git::Tree tree(tree_raw);
    git_signature* sig_raw = nullptr;
    check(git_signature_new(&sig_raw, "Plinth Test", "test@plinth.invalid", 1764680000 + ++clock_, 0), "signature");
    audit::git::Signature sig(sig_raw);
    git_oid parent_id;
    audit::git::Commit parent;
    if (git_reference_name_to_id(&parent_id, repo_.get(), "HEAD") == 0) {
      git_commit* p = nullptr;
      check(git_commit_lookup(&p, repo_.get(), &parent_id), "parent lookup");
      parent.reset(p);
    }
    const git_commit* parents[] = {parent.get()};
    check(git_commit_create(&commit_id, repo_.get(), "HEAD", sig.get(), sig.get(), nullptr, message.c_str(),
                            tree.get(), parent ? 1 : 0, parents),
          "commit");
    return git_oid_tostr_s(&commit_id);
  }

  /// write(), add() and commit() of one file; returns the new commit id.
  std::string commit_file(const std::string& rel, const std::string& text, const std::string& message) const {
    write(rel, text);
    add(rel);
    return commit(message);
  }

  /// Creates (or moves) the reference `name` ("refs/heads/x", "refs/tags/v1",
  /// "refs/remotes/origin/main") to the commit `id`.
  void set_ref(const std::string& name, const std::string& id) const {
    git_oid oid;
    check(git_oid_fromstr(&oid, id.c_str()), "oid");
    git_reference* raw = nullptr;
    check(git_reference_create(&raw, repo_.get(), name.c_str(), &oid, 1, "test"), "reference " + name);
    audit::git::Reference owned(raw);
  }

  /// Points HEAD straight at the commit `id` (a detached HEAD).
  void detach(const std::string& id) const {
    git_oid oid;
    check(git_oid_fromstr(&oid, id.c_str()), "oid");
    check(git_repository_set_head_detached(repo_.get(), &oid), "detach");
  }

  /// The commit id a reference name resolves to, as libgit2 reports it.
  std::string id_of(const std::string& name) const {
    git_oid oid;
    check(git_reference_name_to_id(&oid, repo_.get(), name.c_str()), "resolve " + name);
    return git_oid_tostr_s(&oid);
  }

 private:
  audit::git::Index open_index() const {
    git_index* raw = nullptr;
    check(git_repository_index(&raw, repo_.get()), "index");
    return audit::git::Index(raw);
  }
  static void check(int rc, const std::string& what) {
    if (rc < 0) throw std::runtime_error("libgit2 " + what + ": " + audit::git::last_error());
  }

  std::string dir_;
  audit::git::Repository repo_;
  mutable int clock_ = 0;
};

}  // namespace plinth::test
