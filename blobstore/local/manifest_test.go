package local

import (
	"errors"
	"reflect"
	"testing"
	"time"
)

func TestManifestRoundTrip(t *testing.T) {
	for _, m := range []*manifest{
		{Key: "k", ETag: `"0x1"`, Modified: time.Unix(0, 0).UTC(), Blocks: []manifestBlk{}},
		{Key: "dir/with space/é", ETag: `"0xABC"`, Modified: time.Unix(1700000000, 123456789).UTC(), Blocks: []manifestBlk{
			{ID: "a", Size: 0, File: "b-1"}, {ID: "Zz_-9", Size: 1 << 40, File: "b-2"}, {ID: "a", Size: 0, File: "b-1"},
		}},
	} {
		got, err := parseManifest(m.marshal())
		if err != nil {
			t.Fatal(err)
		}
		if !reflect.DeepEqual(got, m) {
			t.Fatalf("round trip: %+v, want %+v", got, m)
		}
	}
}

func TestManifestCorrupt(t *testing.T) {
	good := (&manifest{Key: "k", ETag: `"0x1"`, Modified: time.Unix(5, 0), Blocks: []manifestBlk{{ID: "a", Size: 3, File: "b-1"}}}).marshal()
	for name, data := range map[string]string{
		"Empty":        "",
		"Truncated":    string(good[:len(good)-3]),
		"NoEnd":        "blobshare-manifest 1\nkey k\netag x\nmodified 5\nblock a 3 b-1\n",
		"CountWrong":   "blobshare-manifest 1\nkey k\netag x\nmodified 5\nblock a 3 b-1\nend 2\n",
		"Trailing":     string(good) + "junk",
		"BadSize":      "blobshare-manifest 1\nkey k\netag x\nmodified 5\nblock a -3 b-1\nend 1\n",
		"BadFile":      "blobshare-manifest 1\nkey k\netag x\nmodified 5\nblock a 3 ../x\nend 1\n",
		"SlashFile":    "blobshare-manifest 1\nkey k\netag x\nmodified 5\nblock a 3 b-/../x\nend 1\n",
		"OtherVersion": "blobshare-manifest 2\nkey k\netag x\nmodified 5\nend 0\n",
		"NoETag":       "blobshare-manifest 1\nkey k\netag \nmodified 5\nend 0\n",
		"NoKey":        "blobshare-manifest 1\netag x\nmodified 5\nend 0\n",
		"BadKey":       "blobshare-manifest 1\nkey %zz\netag x\nmodified 5\nend 0\n",
		"BadTime":      "blobshare-manifest 1\nkey k\netag x\nmodified soon\nend 0\n",
	} {
		if _, err := parseManifest([]byte(data)); !errors.Is(err, errCorrupt) {
			t.Errorf("%s: %v, want errCorrupt", name, err)
		}
	}
}
