"""Tests of the pinned TypeScript toolchain and course builds."""
