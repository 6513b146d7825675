//go:build !unix

package cpu

import "os"

func lockTemp(*os.File) {}

// tempUnlocked cannot tell without flock: leave the file.
func tempUnlocked(string) bool { return false }

func processAlive(int) bool { return true }
