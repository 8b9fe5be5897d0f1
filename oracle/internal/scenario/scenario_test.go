package scenario

import (
	"testing"

	batchv1 "k8s.io/api/batch/v1"
	"k8s.io/utils/ptr"
)

func TestJobPods(t *testing.T) {
	for _, c := range []struct {
		par, comp *int32
		want      int
	}{
		{nil, nil, 1},
		{ptr.To[int32](20), nil, 20},
		{ptr.To[int32](20), ptr.To[int32](4), 4},
		{ptr.To[int32](3), ptr.To[int32](8), 3},
		{ptr.To[int32](0), ptr.To[int32](8), 0},
	} {
		j := &batchv1.Job{Spec: batchv1.JobSpec{Parallelism: c.par, Completions: c.comp}}
		if got := JobPods(j); got != c.want {
			t.Errorf("parallelism %v completions %v: %d pods, want %d", c.par, c.comp, got, c.want)
		}
	}
}
