package rules

import (
	"fmt"
	"strconv"
	"strings"
)

// Version is a Kubernetes minor release that output targets (1.32-1.38).
type Version struct{ Major, Minor int }

// Supported target versions.
var (
	MinTarget     = Version{1, 32}
	MaxTarget     = Version{1, 38}
	DefaultTarget = Version{1, 34}
)

// ParseVersion reads "1.34", "v1.34" or "1.34.2" (the patch is ignored).
func ParseVersion(s string) (Version, error) {
	t := strings.TrimPrefix(strings.TrimSpace(s), "v")
	parts := strings.Split(t, ".")
	if len(parts) < 2 || len(parts) > 3 {
		return Version{}, fmt.Errorf("target version %q: want MAJOR.MINOR, e.g. 1.34", s)
	}
	var nums [2]int
	for i := range nums {
		n, err := strconv.Atoi(parts[i])
		if err != nil || n < 0 {
			return Version{}, fmt.Errorf("target version %q: want MAJOR.MINOR, e.g. 1.34", s)
		}
		nums[i] = n
	}
	v := Version{nums[0], nums[1]}
	if v.Less(MinTarget) || MaxTarget.Less(v) {
		return Version{}, fmt.Errorf("target version %s is not supported: kubedra targets %s to %s", v, MinTarget, MaxTarget)
	}
	return v, nil
}

// Less reports whether v is older than o.
func (v Version) Less(o Version) bool {
	if v.Major != o.Major {
		return v.Major < o.Major
	}
	return v.Minor < o.Minor
}

// AtLeast reports whether v is o or newer.
func (v Version) AtLeast(o Version) bool { return !v.Less(o) }

func (v Version) String() string { return fmt.Sprintf("%d.%d", v.Major, v.Minor) }

// Set implements pflag.Value so a Version can be a flag.
func (v *Version) Set(s string) error {
	p, err := ParseVersion(s)
	if err != nil {
		return err
	}
	*v = p
	return nil
}

// Type implements pflag.Value.
func (v *Version) Type() string { return "version" }
