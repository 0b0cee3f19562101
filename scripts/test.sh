#!/usr/bin/env bash
# Sets up a fresh machine and runs the whole test suite: unit tests, and
# integration tests against real servers (nginx, python http.server, vsftpd,
# pyftpdlib, proftpd, ferry card) that the tests start on loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift format lint --strict -r Sources Tests Examples Package.swift
# FerryKit's DocC site, 0 warnings, every public symbol documented (about 40 s
# from a clean .build/docs, 11 s after; its own scratch folder).
scripts/docs.sh
swift build --build-tests
# One test at a time: many tests time real servers (rate limits, latency, a
# stale-image guard) and start processes; on a 2-core machine, suites running in
# parallel starve each other's servers and make those timings flaky. About 15 min.
swift test --skip-build --no-parallel "$@"
# The Debian package, built and checked once per full run (scripts/package-test.sh:
# release build, lintian, install into a temporary root, man, completion, unit).
# It adds about 6 minutes on 2 cores, mostly the release build; skipped when
# arguments pick tests, or with FERRY_SKIP_PACKAGE=1 for a quicker local run.
if (($# == 0)) && [[ -z ${FERRY_SKIP_PACKAGE:-} ]]; then
  scripts/package-test.sh
fi
