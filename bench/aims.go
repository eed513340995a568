package main

import (
	"fmt"
	"strings"
)

// An aim is one row of the README's table of aims: the measure as the
// README names it, the aim as it writes it, and the checks that decide,
// from the figures of this run, whether it is met. The table printed at the
// end of a run comes from this data, and TestAimsMatchREADME keeps it and
// the README's table in step.
type aim struct {
	readme string // the README's "measure" cell, exactly
	aim    string // the README's "aim" cell, exactly
	checks []check
}

// A check compares one figure (unit of the benchmark pkg/name) with a
// limit, or, when than is set, with factor × another figure.
type check struct {
	label     string // names the figure in the table when the check fails
	pkg, name string
	unit      string
	atLeast   bool    // figure ≥ bound; otherwise figure < bound
	limit     float64 // the bound, without than
	than      *figureRef
	factor    float64 // bound = factor × than's figure
}

type figureRef struct{ pkg, name, unit string }

func atLeast(label, pkg, name, unit string, limit float64) check {
	return check{label: label, pkg: pkg, name: name, unit: unit, atLeast: true, limit: limit}
}

func below(label, pkg, name, unit string, limit float64) check {
	return check{label: label, pkg: pkg, name: name, unit: unit, limit: limit}
}

// flatRatio is what "flat" means in the aims: at most 10% slower with the
// load than without.
const flatRatio = 0.9

// eachSmallFilePhase is one ≥ limit check per phase of the small-files
// benchmark name.
func eachSmallFilePhase(name string, limit float64) []check {
	var cs []check
	for _, p := range []string{"create-write-close", "stat", "readdir-lstat", "rename", "unlink"} {
		cs = append(cs, atLeast(p, "./fs/fusefs", name, "ratio-"+p, limit))
	}
	return cs
}

// vsRclone is one ≥ limit check per remote rclone mounts (a local
// directory, Azurite) and column of the rclone benchmark name: its
// figures are ratio-vs-rclone-<remote>-<column> of <name>/<remote>.
func vsRclone(name string, columns []string, limit float64) []check {
	var cs []check
	for _, remote := range []string{"local", "azurite"} {
		for _, c := range columns {
			cs = append(cs, atLeast(remote+" "+c, "./fs/fusefs", name+"/"+remote, "ratio-vs-rclone-"+remote+"-"+c, limit))
		}
	}
	return cs
}

var aims = []aim{
	{"mount vs go-fuse loopback, sequential write / read 1 GiB", "≥ 1.0", []check{
		atLeast("write", "./fs/fusefs", "SeqWrite", "ratio", 1.0),
		atLeast("read", "./fs/fusefs", "SeqRead", "ratio", 1.0),
	}},
	{"mount vs loopback, small files from a child process: create+write+close, stat, readdir+lstat, rename, unlink", "≥ 0.8 each",
		eachSmallFilePhase("SmallFiles", 0.8)},
	{"the same with the client in the benchmark's process", "≥ 0.8 each",
		eachSmallFilePhase("SmallFilesInProcess", 0.8)},
	{"mount vs rclone's mount over a local directory and over Azurite, small files: create+write+close, stat, readdir+lstat, rename, unlink", "≥ 2 each",
		vsRclone("RcloneSmallFiles", []string{"create-write-close", "stat", "readdir-lstat", "rename", "unlink"}, 2)},
	{"mount vs rclone's mount, `tar -x`, `ls -lR`, `rm -rf` of 5,000 files", "≥ 2 each",
		vsRclone("RcloneTools", []string{"tar-x", "ls-lR", "rm-rf"}, 2)},
	{"mount vs rclone's mount, sequential write / read 1 GiB", "≥ 1.0", append(
		vsRclone("RcloneSeqWrite", []string{"seq-write"}, 1), vsRclone("RcloneSeqRead", []string{"seq-read"}, 1)...)},
	{"cost per operation with 100,000 files and 10,000 open handles elsewhere", "flat (1.0)", func() []check {
		var cs []check
		for _, p := range []string{"create-write-close", "stat", "readdir-lstat", "rename", "unlink"} {
			cs = append(cs, atLeast(p, "./fs/fusefs", "Flatness", "flat-"+p, flatRatio))
		}
		return cs
	}()},
	{"peak RSS of the mount server writing 2 GiB", "< 200 MiB", []check{
		below("MiB", "./fs/fusefs", "PeakRSS", "peak-RSS-MiB", 200),
	}},
	{"local blob store vs plain file copy, sequential write", "≥ 0.8", []check{
		atLeast("", "./blobstore/local", "SequentialWrite", "ratio", 0.8),
	}},
	{"FileREST upload of 1 GiB (Go SDK, 4 MiB ranges × 4) vs 4 writers each fsyncing every 4 MiB / vs a no-op server, every range durable", "≥ 0.8 / ≥ 0.5", []check{
		atLeast("disk", "./filerest", "Transfer", "up_vs_disk4", 0.8),
		atLeast("no-op", "./filerest", "Transfer", "up_vs_sink", 0.5),
	}},
	{"FileREST vs Azurite's Blob API, 1 GiB download", "≥ 10×", []check{
		atLeast("", "./filerest", "Transfer", "down_ratio", 10),
	}},
	{"Get File Properties from 16 clients", "p99 < 5 ms", []check{
		below("p99 µs", "./filerest", "GetFileProperties", "p99_µs", 5000),
	}},
	{"Get File Properties vs Get Blob Properties, 16 clients each on one `serve`", "≥ 1.0, p99 < 5 ms", []check{
		atLeast("ops", "./integration", "GetPropertiesFileVsBlob", "ratio", 1),
		below("p99 µs", "./integration", "GetPropertiesFileVsBlob", "file_p99_µs", 5000),
	}},
	{"Blob service upload of 1 GiB (azblob, 4 MiB blocks × 4) vs 4 writers each fsyncing every 4 MiB / vs a no-op server, every block durable", "≥ 0.8 / ≥ 0.5", []check{
		atLeast("disk", "./blob", "BlobTransfer", "up_vs_disk4", 0.8),
		atLeast("no-op", "./blob", "BlobTransfer", "up_vs_sink", 0.5),
	}},
	{"Blob service vs Azurite, download in 4 MiB blocks × 4", "≥ 10×", []check{
		atLeast("", "./blob", "BlobTransfer", "down_ratio", 10),
	}},
	{"Get Blob Properties from 16 clients vs Azurite", "≥ 5×, p99 below Azurite's", []check{
		atLeast("ops", "./blob", "BlobGetProperties", "ops_ratio", 5),
		{label: "p99 µs", pkg: "./blob", name: "BlobGetProperties", unit: "blobshare_p99_µs",
			than: &figureRef{"./blob", "BlobGetProperties", "azurite_p99_µs"}, factor: 1},
	}},
	{"Queue put+get+delete cycles from 16 workers vs Azurite", "≥ 5×, p99 below Azurite's", []check{
		atLeast("cycles", "./queue", "QueueCycles", "ratio", 5),
		{label: "p99 µs", pkg: "./queue", name: "QueueCycles", unit: "blobshare_p99_µs",
			than: &figureRef{"./queue", "QueueCycles", "azurite_p99_µs"}, factor: 1},
	}},
	{"SMB: smbclient put / get of 1 GiB vs Samba's smbd on the same disk, signing on both", "≥ 0.8 / ≥ 1.0", []check{
		atLeast("put", "./smb", "SmbclientVsSmbd", "put-ratio", 0.8),
		atLeast("get", "./smb", "SmbclientVsSmbd", "get-ratio", 1.0),
	}},
	{"SMB: smbclient `mput` of 5,000 small files vs smbd", "≥ 0.8", []check{
		atLeast("", "./smb", "SmbclientVsSmbd", "small-ratio", 0.8),
	}},
	{"peak RSS of `serve` while smbclient puts and gets 2 GiB", "< 200 MiB", []check{
		below("MiB", "./smb", "ServeRSS", "peak-RSS-MiB", 200),
	}},
	{"lock table open+close pairs per second (0, 100, 10,000 other handles)", "≥ 10,000, flat", []check{
		atLeast("others=0", "./locks", "OpenClose/others=0", "pairs/s", 10000),
		atLeast("others=100", "./locks", "OpenClose/others=100", "pairs/s", 10000),
		atLeast("others=10000", "./locks", "OpenClose/others=10000", "pairs/s", 10000),
		{label: "others=10000 vs 0", pkg: "./locks", name: "OpenClose/others=10000", unit: "pairs/s", atLeast: true,
			than: &figureRef{"./locks", "OpenClose/others=0", "pairs/s"}, factor: flatRatio},
	}},
}

// figures indexes a run's results: pkg, benchmark name, unit → value.
type figures map[[3]string]float64

func indexFigures(all []result) figures {
	f := figures{}
	for _, r := range all {
		for _, m := range r.metrics {
			f[[3]string{r.pkg, r.name, m.unit}] = m.value
		}
	}
	return f
}

// verdict is the "now" cell of an aim: "met", or the figures of the checks
// that failed, or what did not run.
func (a aim) verdict(f figures) string {
	var failed, missing []string
	for _, c := range a.checks {
		v, ok := f[[3]string{c.pkg, c.name, c.unit}]
		if !ok {
			missing = append(missing, strings.TrimPrefix(c.pkg, "./")+" "+c.name+" "+c.unit)
			continue
		}
		bound := c.limit
		if c.than != nil {
			other, ok := f[[3]string{c.than.pkg, c.than.name, c.than.unit}]
			if !ok {
				missing = append(missing, strings.TrimPrefix(c.than.pkg, "./")+" "+c.than.name+" "+c.than.unit)
				continue
			}
			bound = c.factor * other
		}
		if (c.atLeast && v >= bound) || (!c.atLeast && v < bound) {
			continue
		}
		fig := formatValue(v)
		if c.than != nil {
			fig += " against " + formatValue(bound)
		}
		failed = append(failed, strings.TrimSpace(c.label+" "+fig))
	}
	switch {
	case len(missing) > 0:
		return "not measured (" + strings.Join(missing, "; ") + ")"
	case len(failed) > 0:
		return "**" + strings.Join(failed, ", ") + "**"
	default:
		return "met"
	}
}

// renderAims is the table of aims with this run's verdicts.
func renderAims(all []result, full bool) string {
	var b strings.Builder
	if full {
		b.WriteString("Aims, at the sizes they name (met, or the figures that miss):\n\n")
	} else {
		b.WriteString("Aims (met, or the figures that miss), measured at the quick sizes of the headings above, not the sizes the aims name (-full runs those):\n\n")
	}
	b.WriteString("| measure | aim | now |\n|---|---|---|\n")
	f := indexFigures(all)
	for _, a := range aims {
		fmt.Fprintf(&b, "| %s | %s | %s |\n", a.readme, a.aim, a.verdict(f))
	}
	return b.String()
}
