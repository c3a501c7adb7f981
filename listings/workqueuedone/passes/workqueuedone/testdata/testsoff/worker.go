// Package testsoff has a stall in a test file: reported only with -tests.
package testsoff
