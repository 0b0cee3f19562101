#!/usr/bin/env bash
# Sets up a fresh machine and runs the whole test suite: unit tests, and
# integration tests against real servers (nginx, python http.server, vsftpd,
# pyftpdlib, proftpd, ferry card) that the tests start on loopback ports.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
swift format lint --strict -r Sources Tests Package.swift
swift build --build-tests
swift test --skip-build "$@"
