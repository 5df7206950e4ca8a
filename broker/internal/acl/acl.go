package acl

import (
	"fmt"
	"strings"

	"github.com/twmb/franz-go/pkg/kmsg"
)

// Kafka's enums, by their wire values (kmsg's types).
type (
	ResourceType = kmsg.ACLResourceType
	PatternType  = kmsg.ACLResourcePatternType
	Operation    = kmsg.ACLOperation
	Permission   = kmsg.ACLPermissionType
)

// ClusterName is the one name of the cluster resource.
const ClusterName = "kafka-cluster"

// Wildcard is the literal resource name, principal and host that match
// everything.
const (
	Wildcard          = "*"
	WildcardPrincipal = "User:*"
)

// Binding is one ACL.
type Binding struct {
	ResourceType ResourceType
	Name         string
	Pattern      PatternType // LITERAL or PREFIXED
	Principal    string
	Host         string
	Operation    Operation
	Permission   Permission
}

func (b Binding) String() string {
	return fmt.Sprintf("(pattern=%s:%s:%s, principal=%s, host=%s, operation=%s, permission=%s)",
		b.ResourceType, b.Pattern, b.Name, b.Principal, b.Host, b.Operation, b.Permission)
}

// InvalidError is a binding or filter Kafka answers INVALID_REQUEST; its
// text is Kafka's message.
type InvalidError struct{ Msg string }

func (e *InvalidError) Error() string { return e.Msg }

func invalid(format string, args ...any) error {
	return &InvalidError{Msg: fmt.Sprintf(format, args...)}
}

// supported is what each resource type's ACLs may name (Kafka's
// AclEntry.supportedOperations); ALL is allowed everywhere.
var supported = map[ResourceType][]Operation{
	kmsg.ACLResourceTypeTopic: {kmsg.ACLOperationRead, kmsg.ACLOperationWrite, kmsg.ACLOperationCreate, kmsg.ACLOperationDescribe,
		kmsg.ACLOperationDelete, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeGroup: {kmsg.ACLOperationRead, kmsg.ACLOperationDescribe, kmsg.ACLOperationDelete,
		kmsg.ACLOperationDescribeConfigs, kmsg.ACLOperationAlterConfigs},
	kmsg.ACLResourceTypeCluster: {kmsg.ACLOperationCreate, kmsg.ACLOperationClusterAction, kmsg.ACLOperationDescribeConfigs,
		kmsg.ACLOperationAlterConfigs, kmsg.ACLOperationIdempotentWrite, kmsg.ACLOperationAlter, kmsg.ACLOperationDescribe},
	kmsg.ACLResourceTypeTransactionalId: {kmsg.ACLOperationDescribe, kmsg.ACLOperationWrite},
	kmsg.ACLResourceTypeDelegationToken: {kmsg.ACLOperationDescribe},
	kmsg.ACLResourceTypeUser:            {kmsg.ACLOperationCreateTokens, kmsg.ACLOperationDescribeTokens},
}

// SupportedOperations lists the operations ACLs of rt may name, ALL aside:
// the bits of KIP-430's authorized operations.
func SupportedOperations(rt ResourceType) []Operation { return supported[rt] }

func knownResourceType(rt ResourceType) bool { _, ok := supported[rt]; return ok }

func knownOperation(op Operation) bool {
	return op >= kmsg.ACLOperationAll && op <= kmsg.ACLOperationDescribeTokens
}

// Validate checks b as CreateAcls does (Kafka's AclControlManager and
// AclApis), returning an *InvalidError with Kafka's text.
func (b Binding) Validate() error {
	if !knownResourceType(b.ResourceType) {
		return invalid("Invalid resourceType %s", b.ResourceType)
	}
	if b.Pattern != kmsg.ACLResourcePatternTypeLiteral && b.Pattern != kmsg.ACLResourcePatternTypePrefixed {
		return invalid("Invalid patternType %s", b.Pattern)
	}
	if !knownOperation(b.Operation) {
		return invalid("Invalid operation %s", b.Operation)
	}
	if b.Permission != kmsg.ACLPermissionTypeAllow && b.Permission != kmsg.ACLPermissionTypeDeny {
		return invalid("Invalid permissionType %s", b.Permission)
	}
	if b.Name == "" {
		return invalid("Resource name should not be empty")
	}
	if b.ResourceType == kmsg.ACLResourceTypeCluster && b.Name != ClusterName {
		return invalid("The only valid name for the CLUSTER resource is %s", ClusterName)
	}
	if b.Operation != kmsg.ACLOperationAll && !contains(supported[b.ResourceType], b.Operation) {
		return invalid("ACL operation %s is not valid for resource type %s", b.Operation, b.ResourceType)
	}
	if err := ValidatePrincipal(b.Principal); err != nil {
		return err
	}
	if b.Host == "" {
		return invalid("Invalid empty host")
	}
	return nil
}

// ValidatePrincipal checks a principal is "Type:name", as Kafka's
// SecurityUtils.parseKafkaPrincipal does.
func ValidatePrincipal(p string) error {
	if !strings.Contains(p, ":") {
		return invalid("Could not parse principal from `%s` (no colon is present separating the principal type from the principal name)", p)
	}
	return nil
}

func contains(ops []Operation, op Operation) bool {
	for _, o := range ops {
		if o == op {
			return true
		}
	}
	return false
}

// Filter selects bindings for DescribeAcls and DeleteAcls. Nil strings
// match any value; ANY enums match any value; Pattern MATCH selects every
// binding that would apply to the named resource.
type Filter struct {
	ResourceType ResourceType
	Name         *string
	Pattern      PatternType
	Principal    *string
	Host         *string
	Operation    Operation
	Permission   Permission
}

// Validate checks f as Kafka's request parsing does: an UNKNOWN anywhere is
// INVALID_REQUEST.
func (f Filter) Validate() error {
	switch {
	case f.ResourceType != kmsg.ACLResourceTypeAny && !knownResourceType(f.ResourceType):
		return invalid("Filter contain UNKNOWN elements")
	case f.Pattern < kmsg.ACLResourcePatternTypeAny || f.Pattern > kmsg.ACLResourcePatternTypePrefixed:
		return invalid("Filter contain UNKNOWN elements")
	case f.Operation != kmsg.ACLOperationAny && !knownOperation(f.Operation):
		return invalid("Filter contain UNKNOWN elements")
	case f.Permission < kmsg.ACLPermissionTypeAny || f.Permission > kmsg.ACLPermissionTypeAllow:
		return invalid("Filter contain UNKNOWN elements")
	}
	return nil
}

// Matches reports whether f selects b (Kafka's AclBindingFilter.matches).
func (f Filter) Matches(b Binding) bool {
	if f.ResourceType != kmsg.ACLResourceTypeAny && f.ResourceType != b.ResourceType {
		return false
	}
	switch f.Pattern {
	case kmsg.ACLResourcePatternTypeAny:
		if f.Name != nil && *f.Name != b.Name {
			return false
		}
	case kmsg.ACLResourcePatternTypeMatch:
		if f.Name != nil && !b.appliesTo(*f.Name) {
			return false
		}
	default:
		if f.Pattern != b.Pattern || f.Name != nil && *f.Name != b.Name {
			return false
		}
	}
	if f.Principal != nil && *f.Principal != b.Principal {
		return false
	}
	if f.Host != nil && *f.Host != b.Host {
		return false
	}
	if f.Operation != kmsg.ACLOperationAny && f.Operation != b.Operation {
		return false
	}
	return f.Permission == kmsg.ACLPermissionTypeAny || f.Permission == b.Permission
}

// appliesTo reports whether b's pattern names the resource name.
func (b Binding) appliesTo(name string) bool {
	if b.Pattern == kmsg.ACLResourcePatternTypePrefixed {
		return strings.HasPrefix(name, b.Name)
	}
	return b.Name == name || b.Name == Wildcard
}
