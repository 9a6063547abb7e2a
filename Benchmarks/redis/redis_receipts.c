/*
 * redis_receipts: drives Benchmarks/redis/receipts.lua over an NDJSON file of ingress
 * events, pipelined, the way a backend would feed a Redis receipts service.
 *
 * Built by Benchmarks/run.sh: gcc -O2 redis_receipts.c $(pkg-config --cflags --libs hiredis)
 *
 *   redis_receipts HOST PORT SCRIPT.lua EVENTS.ndjson DEPTH
 *
 * Loads the script (SCRIPT LOAD), then sends one EVALSHA per line with up to DEPTH
 * calls in flight: calls are appended to hiredis's output buffer and written in one go
 * whenever the client has read every reply it had, so each write carries a batch and
 * Redis (appendfsync always) commits a batch with one fsync, like a PUB of many events.
 * Apply latency is from a call's append to its reply. Prints one RESULT line.
 */
#define _GNU_SOURCE
#include <hiredis/hiredis.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static uint64_t mono_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

static char *slurp(const char *path, size_t *size) {
    FILE *file = fopen(path, "rb");
    if (!file) { perror(path); exit(1); }
    fseek(file, 0, SEEK_END);
    long length = ftell(file);
    fseek(file, 0, SEEK_SET);
    char *bytes = malloc((size_t)length + 1);
    if (!bytes || fread(bytes, 1, (size_t)length, file) != (size_t)length) { perror(path); exit(1); }
    bytes[length] = 0;
    fclose(file);
    *size = (size_t)length;
    return bytes;
}

static int by_value(const void *a, const void *b) {
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

int main(int argc, char **argv) {
    if (argc != 6) {
        fprintf(stderr, "usage: redis_receipts HOST PORT SCRIPT.lua EVENTS.ndjson DEPTH\n");
        return 2;
    }
    long depth = atol(argv[5]);
    if (depth < 1) depth = 1;
    redisContext *redis = redisConnect(argv[1], atoi(argv[2]));
    if (!redis || redis->err) {
        fprintf(stderr, "redis_receipts: cannot connect: %s\n", redis ? redis->errstr : "out of memory");
        return 1;
    }
    size_t script_size, events_size;
    char *script = slurp(argv[3], &script_size);
    char *events = slurp(argv[4], &events_size);

    redisReply *loaded = redisCommand(redis, "SCRIPT LOAD %b", script, script_size);
    if (!loaded || loaded->type != REDIS_REPLY_STRING) {
        fprintf(stderr, "redis_receipts: SCRIPT LOAD failed: %s\n", loaded && loaded->str ? loaded->str : redis->errstr);
        return 1;
    }
    char sha[64];
    snprintf(sha, sizeof sha, "%s", loaded->str);
    freeReplyObject(loaded);

    /* The lines: start and length of each non-empty line. */
    size_t capacity = 1 << 20, count = 0;
    size_t *starts = malloc(capacity * sizeof *starts), *lengths = malloc(capacity * sizeof *lengths);
    for (size_t at = 0; at < events_size;) {
        char *end = memchr(events + at, '\n', events_size - at);
        size_t stop = end ? (size_t)(end - events) : events_size;
        if (stop > at) {
            if (count == capacity) {
                capacity *= 2;
                starts = realloc(starts, capacity * sizeof *starts);
                lengths = realloc(lengths, capacity * sizeof *lengths);
            }
            starts[count] = at;
            lengths[count] = stop - at;
            count++;
        }
        at = stop + 1;
    }

    uint64_t *sent_at = malloc(count * sizeof *sent_at), *latency = malloc(count * sizeof *latency);
    long ok = 0, ignored = 0, duplicates = 0, rejected = 0, errors = 0;
    char first_error[256] = "";
    size_t sent = 0, done = 0;
    struct timespec cpu0, cpu1;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu0);
    uint64_t start = mono_ns();
    while (done < count) {
        while (sent < count && sent - done < (size_t)depth) {
            redisAppendCommand(redis, "EVALSHA %s 0 %b", sha, events + starts[sent], lengths[sent]);
            sent_at[sent++] = mono_ns();
        }
        redisReply *reply;
        if (redisGetReply(redis, (void **)&reply) != REDIS_OK) {
            fprintf(stderr, "redis_receipts: connection failed after %zu replies: %s\n", done, redis->errstr);
            return 1;
        }
        latency[done] = mono_ns() - sent_at[done];
        if (reply->type == REDIS_REPLY_ERROR) {
            if (errors++ == 0) snprintf(first_error, sizeof first_error, "line %zu: %s", done + 1, reply->str);
        } else if (reply->type == REDIS_REPLY_STRING || reply->type == REDIS_REPLY_STATUS) {
            if (strcmp(reply->str, "ok") == 0) ok++;
            else if (strcmp(reply->str, "ign") == 0) ignored++;
            else if (strcmp(reply->str, "dup") == 0) duplicates++;
            else if (strncmp(reply->str, "rej:", 4) == 0) rejected++;
        }
        freeReplyObject(reply);
        done++;
    }
    uint64_t end = mono_ns();
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &cpu1);
    qsort(latency, count, sizeof *latency, by_value);
    double seconds = (double)(end - start) / 1e9;
    double cpu = (double)(cpu1.tv_sec - cpu0.tv_sec) + (double)(cpu1.tv_nsec - cpu0.tv_nsec) / 1e9;
    printf("RESULT mode=redis events=%zu depth=%ld seconds=%.3f events_per_s=%.0f p50_us=%.0f p99_us=%.0f "
           "ok=%ld ignored=%ld duplicates=%ld rejected=%ld errors=%ld client_cpu_s=%.3f\n",
           count, depth, seconds, seconds > 0 ? (double)count / seconds : 0.0,
           count ? (double)latency[count / 2] / 1e3 : 0.0, count ? (double)latency[count * 99 / 100] / 1e3 : 0.0,
           ok, ignored, duplicates, rejected, errors, cpu);
    if (errors) fprintf(stderr, "redis_receipts: %ld errors, the first: %s\n", errors, first_error);
    redisFree(redis);
    return errors ? 1 : 0;
}
