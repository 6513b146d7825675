package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"go.yaml.in/yaml/v3"

	"github.com/tilefit/tilefit/tune"
)

// The parts of the Kubernetes API the manifests in deploy/k8s use
// (batch/v1 Job, core/v1 PersistentVolumeClaim), with their field names
// as the API spells them. Decoding with KnownFields refuses any other key,
// so a misspelt field (say "completionmode") fails here, as the API
// server's strict validation would; kubectl's client-side dry run needs a
// server to fetch the schema from, which CI does not have.
type k8sObject struct {
	APIVersion string      `yaml:"apiVersion"`
	Kind       string      `yaml:"kind"`
	Metadata   k8sMeta     `yaml:"metadata"`
	Spec       yaml.Node   `yaml:"spec"`
	Status     interface{} `yaml:"status,omitempty"`
}

type k8sMeta struct {
	Name   string            `yaml:"name"`
	Labels map[string]string `yaml:"labels,omitempty"`
}

type jobSpec struct {
	CompletionMode       string      `yaml:"completionMode"`
	Completions          *int        `yaml:"completions"`
	Parallelism          *int        `yaml:"parallelism"`
	BackoffLimit         *int        `yaml:"backoffLimit,omitempty"`
	BackoffLimitPerIndex *int        `yaml:"backoffLimitPerIndex,omitempty"`
	MaxFailedIndexes     *int        `yaml:"maxFailedIndexes,omitempty"`
	Template             podTemplate `yaml:"template"`
}

type podTemplate struct {
	Metadata k8sMeta `yaml:"metadata"`
	Spec     podSpec `yaml:"spec"`
}

type podSpec struct {
	RestartPolicy string      `yaml:"restartPolicy"`
	Containers    []container `yaml:"containers"`
	Volumes       []volume    `yaml:"volumes,omitempty"`
}

type container struct {
	Name         string        `yaml:"name"`
	Image        string        `yaml:"image"`
	Command      []string      `yaml:"command"`
	Args         []string      `yaml:"args"`
	Env          []envVar      `yaml:"env,omitempty"`
	Resources    resources     `yaml:"resources"`
	VolumeMounts []volumeMount `yaml:"volumeMounts,omitempty"`
}

type envVar struct {
	Name      string `yaml:"name"`
	Value     string `yaml:"value,omitempty"`
	ValueFrom *struct {
		SecretKeyRef struct {
			Name string `yaml:"name"`
			Key  string `yaml:"key"`
		} `yaml:"secretKeyRef"`
	} `yaml:"valueFrom,omitempty"`
}

type resources struct {
	Limits   map[string]string `yaml:"limits"`
	Requests map[string]string `yaml:"requests,omitempty"`
}

type volumeMount struct {
	Name      string `yaml:"name"`
	MountPath string `yaml:"mountPath"`
}

type volume struct {
	Name                  string `yaml:"name"`
	PersistentVolumeClaim struct {
		ClaimName string `yaml:"claimName"`
	} `yaml:"persistentVolumeClaim"`
}

type pvcSpec struct {
	AccessModes []string `yaml:"accessModes"`
	Resources   struct {
		Requests map[string]string `yaml:"requests"`
	} `yaml:"resources"`
}

func strictDecode(t *testing.T, what string, n *yaml.Node, v any) {
	t.Helper()
	b, err := yaml.Marshal(n)
	if err != nil {
		t.Fatal(err)
	}
	dec := yaml.NewDecoder(bytes.NewReader(b))
	dec.KnownFields(true)
	if err := dec.Decode(v); err != nil {
		t.Fatalf("%s: %v", what, err)
	}
}

var k8sVar = regexp.MustCompile(`\$\(([A-Z_][A-Z0-9_]*)\)`)

// TestK8sManifests checks deploy/k8s: every manifest decodes strictly as
// the kinds it names; the sweep Jobs are Indexed with completions and
// parallelism set, one GPU per pod (nvidia.com/gpu: 1), restartPolicy
// Never, and a command line that tilefit accepts: every flag is one of
// tilefit sweep's, every $(VAR) is defined in the container's env or is
// the Job's JOB_COMPLETION_INDEX, and for every index the --shard value
// parses and names shard INDEX of completions — so the pods together
// cover every cell exactly once (TestShardArithmetic).
func TestK8sManifests(t *testing.T) {
	var help, stderr bytes.Buffer
	Run(context.Background(), []string{"help", "sweep"}, &help, &stderr)
	files, _ := filepath.Glob(filepath.Join("..", "..", "deploy", "k8s", "*.yaml"))
	if len(files) < 2 {
		t.Fatalf("manifests: %v", files)
	}
	jobs := 0
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var obj k8sObject
		dec := yaml.NewDecoder(bytes.NewReader(data))
		dec.KnownFields(true)
		if err := dec.Decode(&obj); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		name := filepath.Base(f)
		switch obj.Kind {
		case "PersistentVolumeClaim":
			var spec pvcSpec
			strictDecode(t, name, &obj.Spec, &spec)
			if obj.APIVersion != "v1" || len(spec.AccessModes) != 1 || spec.AccessModes[0] != "ReadWriteMany" || spec.Resources.Requests["storage"] == "" {
				t.Errorf("%s: %+v %+v", name, obj, spec)
			}
			continue
		case "Job":
		default:
			t.Errorf("%s: kind %q", name, obj.Kind)
			continue
		}
		jobs++
		var spec jobSpec
		strictDecode(t, name, &obj.Spec, &spec)
		if obj.APIVersion != "batch/v1" || obj.Metadata.Name == "" {
			t.Errorf("%s: apiVersion %q, name %q", name, obj.APIVersion, obj.Metadata.Name)
		}
		if spec.CompletionMode != "Indexed" || spec.Completions == nil || spec.Parallelism == nil ||
			*spec.Completions < 1 || *spec.Parallelism < 1 || *spec.Parallelism > *spec.Completions {
			t.Errorf("%s: completionMode %q, completions %v, parallelism %v", name, spec.CompletionMode, spec.Completions, spec.Parallelism)
			continue
		}
		pod := spec.Template.Spec
		if pod.RestartPolicy != "Never" || len(pod.Containers) != 1 {
			t.Errorf("%s: restartPolicy %q, %d containers", name, pod.RestartPolicy, len(pod.Containers))
			continue
		}
		c := pod.Containers[0]
		if gpu := c.Resources.Limits["nvidia.com/gpu"]; gpu != "1" {
			t.Errorf("%s: nvidia.com/gpu limit %q, want 1", name, gpu)
		}
		for _, m := range c.VolumeMounts {
			found := false
			for _, v := range pod.Volumes {
				found = found || v.Name == m.Name
			}
			if !found {
				t.Errorf("%s: volume mount %s of no volume", name, m.Name)
			}
		}
		if len(c.Command) != 1 || c.Command[0] != "tilefit" || len(c.Args) == 0 || c.Args[0] != "sweep" {
			t.Errorf("%s: command %q %q, want tilefit sweep …", name, c.Command, c.Args)
			continue
		}
		env := map[string]string{}
		for _, e := range c.Env {
			if e.ValueFrom != nil {
				env[e.Name] = "postgres://tilefit@db.example.com/tilefit" // from a Secret
			} else {
				env[e.Name] = e.Value
			}
		}
		hasDB, hasShard := false, false
		for i := range *spec.Completions {
			env["JOB_COMPLETION_INDEX"] = strconv.Itoa(i)
			for _, a := range c.Args[1:] {
				for _, m := range k8sVar.FindAllStringSubmatch(a, -1) {
					if _, ok := env[m[1]]; !ok {
						t.Errorf("%s: %s uses $(%s), which the container's env does not define", name, a, m[1])
					}
				}
				a = k8sVar.ReplaceAllStringFunc(a, func(v string) string { return env[v[2:len(v)-1]] })
				flagName, value, _ := strings.Cut(strings.TrimPrefix(a, "--"), "=")
				if !strings.HasPrefix(a, "--") || !regexp.MustCompile(`\n  -`+regexp.QuoteMeta(flagName)+`[ \n]`).MatchString(help.String()) {
					t.Errorf("%s: %q is not a flag of tilefit sweep", name, a)
				}
				switch flagName {
				case "shard":
					hasShard = true
					sh, err := tune.ParseShard(value)
					if err != nil || sh.I != i || sh.N != *spec.Completions {
						t.Errorf("%s: pod %d runs --shard %s (%v); want shard %d of the Job's %d completions", name, i, value, err, i, *spec.Completions)
					}
				case "db":
					hasDB = true
				}
			}
		}
		if !hasDB || !hasShard && !strings.Contains(strings.Join(c.Args, " "), "$(TILEFIT_DB)") {
			t.Errorf("%s: pods neither shard nor share a server: %q", name, c.Args)
		}
	}
	if jobs < 2 {
		t.Errorf("%d Jobs in deploy/k8s, want the shard and the claims recipes", jobs)
	}
}
