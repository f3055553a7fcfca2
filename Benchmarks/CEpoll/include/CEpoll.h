// Linux's epoll for the SSE benchmark's clients (Swift's Glibc module does not export it).
#pragma once
#ifdef __linux__
#include <sys/epoll.h>

// epoll_event is packed on x86-64: its fields read and written here, not through Swift's layout.
static inline void cepoll_set(struct epoll_event *event, unsigned int events, int fd) {
    event->events = events;
    event->data.fd = fd;
}

static inline int cepoll_fd(const struct epoll_event *events, int index) { return events[index].data.fd; }

static inline unsigned int cepoll_in(void) { return EPOLLIN; }
#endif
