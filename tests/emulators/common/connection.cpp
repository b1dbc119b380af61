#include "tests/emulators/common/connection.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <cstdlib>

namespace plinth::emulator {

int accepted_socket(int local_port, int remote_port) {
  DIR* d = opendir("/proc/self/fd");
  if (!d) return -1;
  int found = -1;
  while (dirent* e = readdir(d)) {
    int fd = std::atoi(e->d_name);
    if (fd <= 2) continue;
    sockaddr_storage local{}, peer{};
    socklen_t ll = sizeof local, pl = sizeof peer;
    if (getsockname(fd, reinterpret_cast<sockaddr*>(&local), &ll) != 0 ||
        getpeername(fd, reinterpret_cast<sockaddr*>(&peer), &pl) != 0)
      continue;
    auto port = [](const sockaddr_storage& a) {
      return a.ss_family == AF_INET    ? ntohs(reinterpret_cast<const sockaddr_in&>(a).sin_port)
             : a.ss_family == AF_INET6 ? ntohs(reinterpret_cast<const sockaddr_in6&>(a).sin6_port)
                                       : 0;
    };
    if (port(local) == local_port && port(peer) == remote_port) {
      found = fd;
      break;
    }
  }
  closedir(d);
  return found;
}

bool drop_connection(int local_port, int remote_port) {
  int fd = accepted_socket(local_port, remote_port);
  if (fd < 0) return false;
  shutdown(fd, SHUT_RDWR);
  return true;
}

}  // namespace plinth::emulator
