package karpsim

import (
	"context"
	"fmt"

	"github.com/awslabs/operatorpkg/status"

	awsv1 "github.com/aws/karpenter-provider-aws/pkg/apis/v1"
	v1 "sigs.k8s.io/karpenter/pkg/apis/v1"
	"sigs.k8s.io/karpenter/pkg/cloudprovider"
)

// cloudProvider answers Karpenter's provisioner with the instance types of each NodePool
// (what the AWS provider's GetInstanceTypes returns: every type the NodePool's EC2NodeClass
// can launch, before the NodePool's requirements): by default the AWS provider's own
// (internal/provider), else karplint's export. Its node class is the provider's
// EC2NodeClass (pkg/apis/v1, which registers itself in the scheme), so Karpenter core's
// nodepoolutils.IsManaged sees NodePools whose nodeClassRef is karpenter.k8s.aws/EC2NodeClass
// as managed. The scheduler never launches anything, so the other methods are not reached.
type cloudProvider struct {
	byNodePool map[string][]*cloudprovider.InstanceType
}

var _ cloudprovider.CloudProvider = (*cloudProvider)(nil)

func (c *cloudProvider) GetInstanceTypes(_ context.Context, np *v1.NodePool) ([]*cloudprovider.InstanceType, error) {
	if np == nil {
		return nil, nil
	}
	return c.byNodePool[np.Name], nil
}

func (c *cloudProvider) GetSupportedNodeClasses() []status.Object {
	return []status.Object{&awsv1.EC2NodeClass{}}
}

func (c *cloudProvider) Name() string { return "karplint-oracle" }

func (c *cloudProvider) Create(context.Context, *v1.NodeClaim) (*v1.NodeClaim, error) {
	return nil, fmt.Errorf("oracle: Create is not simulated")
}

func (c *cloudProvider) Delete(context.Context, *v1.NodeClaim) error {
	return fmt.Errorf("oracle: Delete is not simulated")
}

func (c *cloudProvider) Get(context.Context, string) (*v1.NodeClaim, error) {
	return nil, cloudprovider.NewNodeClaimNotFoundError(fmt.Errorf("oracle: no instances"))
}

func (c *cloudProvider) List(context.Context) ([]*v1.NodeClaim, error) { return nil, nil }

func (c *cloudProvider) IsDrifted(context.Context, *v1.NodeClaim) (cloudprovider.DriftReason, error) {
	return "", nil
}

func (c *cloudProvider) RepairPolicies() []cloudprovider.RepairPolicy { return nil }
