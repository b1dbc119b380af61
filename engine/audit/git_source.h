#pragma once
// Reading a git repository with libgit2 (never a `git` subprocess): owning
// handles for libgit2 objects, and the blueprint files as they are at a ref
// (`plinth plan --against REF`). docs/git-provenance.md describes both.
#include <git2.h>

#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "engine/core/result.h"

namespace plinth::audit {

namespace git {

template <typename T, void (*Free)(T*)>
struct Deleter {
  void operator()(T* p) const { Free(p); }
};

/// Owning libgit2 handles: each frees its object with the matching git_*_free.
using Repository = std::unique_ptr<git_repository, Deleter<git_repository, git_repository_free>>;
using Object = std::unique_ptr<git_object, Deleter<git_object, git_object_free>>;
using Commit = std::unique_ptr<git_commit, Deleter<git_commit, git_commit_free>>;
using Tree = std::unique_ptr<git_tree, Deleter<git_tree, git_tree_free>>;
using TreeEntry = std::unique_ptr<git_tree_entry, Deleter<git_tree_entry, git_tree_entry_free>>;
using Blob = std::unique_ptr<git_blob, Deleter<git_blob, git_blob_free>>;
using Reference = std::unique_ptr<git_reference, Deleter<git_reference, git_reference_free>>;
using Index = std::unique_ptr<git_index, Deleter<git_index, git_index_free>>;
using Signature = std::unique_ptr<git_signature, Deleter<git_signature, git_signature_free>>;
using StatusList = std::unique_ptr<git_status_list, Deleter<git_status_list, git_status_list_free>>;
using BranchIterator = std::unique_ptr<git_branch_iterator, Deleter<git_branch_iterator, git_branch_iterator_free>>;

/// Initialises libgit2 exactly once per process (thread-safe); every call
/// into libgit2 in Plinth goes through a function that calls this first.
void init();

/// libgit2's message for the last failed call on this thread ("unknown error"
/// when it left none).
std::string last_error();

/// Opens the repository that contains `path` (a directory or a file inside the
/// work tree), searching parent directories. Returns a null handle (not an
/// error) when `path` is not inside any repository; an error when a repository
/// was found but cannot be opened (corrupt, or owned by another user).
Result<Repository> open_containing(const std::string& path);

}  // namespace git

/// Blueprint texts as they were at a git ref.
struct Snapshot {
  std::string ref;     ///< as the user wrote it ("origin/main", "HEAD~1", "v1.2")
  std::string commit;  ///< the commit it resolved to, 40 hex digits
  /// (path, text) of every requested file present at the ref, in request
  /// order; ready for bp::load_strings.
  std::vector<std::pair<std::string, std::string>> docs;
  /// Requested paths that did not exist at the ref (blueprint files added since).
  std::vector<std::string> absent;
  bool operator==(const Snapshot&) const = default;
};

/// Reads `paths` straight from the object database as they are in the commit
/// `ref` names (anything git_revparse_single accepts: a branch, a tag,
/// "origin/main", a commit id, "HEAD~1"). `repo` is any path inside the work
/// tree; each path is relative to the repository root or absolute inside the
/// work tree. A path missing at the ref is listed in `absent`, not an error.
/// Errors: no repository at `repo`; an unknown ref (the message lists some
/// branches that exist); a path that is a directory at the ref or outside the
/// work tree.
Result<Snapshot> read_at_ref(const std::string& repo, const std::string& ref, const std::vector<std::string>& paths);

}  // namespace plinth::audit
