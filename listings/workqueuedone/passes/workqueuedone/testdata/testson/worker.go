// Package testson has a stall in a test file: reported only with -tests.
package testson
