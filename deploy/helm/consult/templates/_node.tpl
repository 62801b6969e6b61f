{{/*
One kind of node (service, worker, actor): a Deployment running the image with ROLES set.
Called with (dict "root" $ "component" "service" "node" .Values.serviceNodes).
*/}}
{{- define "consult.nodeDeployment" -}}
{{- $root := .root -}}
{{- $node := .node -}}
{{- $component := .component -}}
{{- $valid := list "http" "hub" "actors" "workers" "telemetry" "idp" -}}
{{- if not $node.roles -}}
{{- fail (printf "%sNodes.roles is empty" $component) -}}
{{- end -}}
{{- range $node.roles -}}
{{- if not (has . $valid) -}}
{{- fail (printf "%sNodes.roles: unknown role %q (roles: %s)" $component . (join ", " $valid)) -}}
{{- end -}}
{{- end -}}
{{- if lt (int $node.terminationGracePeriodSeconds) (add (int $node.preStopSleepSeconds) 35) -}}
{{- fail (printf "%sNodes.terminationGracePeriodSeconds (%v) must be at least preStopSleepSeconds + 35 (the node's shutdown may take 30 s after SIGTERM)" $component $node.terminationGracePeriodSeconds) -}}
{{- end -}}
{{- $http := include "consult.servesHttp" $node.roles -}}
{{- $telemetry := has "telemetry" $node.roles -}}
{{- $tls := $root.Values.telemetry.tls -}}
apiVersion: apps/v1
kind: Deployment
metadata:
  name: {{ include "consult.fullname" $root }}-{{ $component }}
  labels:
    {{- include "consult.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
spec:
  {{- if not $node.autoscaling.enabled }}
  replicas: {{ $node.replicaCount }}
  {{- end }}
  revisionHistoryLimit: 5
  minReadySeconds: {{ $node.minReadySeconds }}
  strategy:
    {{- toYaml $node.strategy | nindent 4 }}
  selector:
    matchLabels:
      {{- include "consult.selectorLabels" $root | nindent 6 }}
      app.kubernetes.io/component: {{ $component }}
  template:
    metadata:
      labels:
        {{- include "consult.selectorLabels" $root | nindent 8 }}
        app.kubernetes.io/component: {{ $component }}
        {{- with $node.podLabels }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
      annotations:
        # Settings changed in values roll the pods.
        checksum/config: {{ include (print $root.Template.BasePath "/configmap.yaml") $root | sha256sum }}
        {{- if not $root.Values.secrets.existingSecret }}
        checksum/secret: {{ include (print $root.Template.BasePath "/secret.yaml") $root | sha256sum }}
        {{- end }}
        {{- if $root.Values.metrics.podAnnotations }}
        prometheus.io/scrape: "true"
        prometheus.io/port: {{ $root.Values.ports.metrics | quote }}
        prometheus.io/path: /metrics
        {{- end }}
        {{- with $node.podAnnotations }}
        {{- toYaml . | nindent 8 }}
        {{- end }}
    spec:
      serviceAccountName: {{ include "consult.serviceAccountName" $root }}
      automountServiceAccountToken: false
      {{- with $root.Values.imagePullSecrets }}
      imagePullSecrets:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        {{- toYaml $root.Values.podSecurityContext | nindent 8 }}
      terminationGracePeriodSeconds: {{ $node.terminationGracePeriodSeconds }}
      containers:
        - name: {{ $component }}
          image: {{ include "consult.image" $root }}
          imagePullPolicy: {{ $root.Values.image.pullPolicy }}
          securityContext:
            {{- toYaml $root.Values.securityContext | nindent 12 }}
          envFrom:
            - configMapRef:
                name: {{ include "consult.fullname" $root }}-config
            - secretRef:
                name: {{ include "consult.secretName" $root }}
          env:
            - name: ROLES
              value: {{ join "," $node.roles | quote }}
            - name: NODE_ID
              valueFrom:
                fieldRef:
                  fieldPath: metadata.name
            - name: HOST
              value: "0.0.0.0"
            - name: PORT
              value: {{ $root.Values.ports.http | quote }}
            - name: METRICS_HOST
              value: "0.0.0.0"
            - name: METRICS_PORT
              value: {{ $root.Values.ports.metrics | quote }}
            - name: GRPC_PORT
              value: {{ $root.Values.ports.grpc | quote }}
            # Asks between nodes over direct links (decision 1186): listening on the pod's network, dialled at its IP.
            - name: ACTOR_LINK_HOST
              value: "0.0.0.0"
            - name: ACTOR_LINK_PORT
              value: {{ $root.Values.ports.actorLink | quote }}
            - name: ACTOR_LINK_ADVERTISE
              valueFrom:
                fieldRef:
                  fieldPath: status.podIP
            - name: STORAGE_FS_ROOT
              value: /data/objects
            {{- if and $telemetry $tls.secretName }}
            - name: GRPC_TLS_CERT_FILE
              value: /etc/consult/telemetry-tls/tls.crt
            - name: GRPC_TLS_KEY_FILE
              value: /etc/consult/telemetry-tls/tls.key
            {{- if $tls.clientAuth }}
            - name: GRPC_TLS_CA_FILE
              value: /etc/consult/telemetry-tls/ca.crt
            - name: GRPC_TLS_CLIENT_AUTH
              value: "true"
            {{- end }}
            {{- end }}
            {{- with $root.Values.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
            {{- with $node.extraEnv }}
            {{- toYaml . | nindent 12 }}
            {{- end }}
          ports:
            {{- if $http }}
            - name: http
              containerPort: {{ $root.Values.ports.http }}
              protocol: TCP
            {{- end }}
            - name: metrics
              containerPort: {{ $root.Values.ports.metrics }}
              protocol: TCP
            {{- if has "actors" $node.roles }}
            - name: actor-link
              containerPort: {{ $root.Values.ports.actorLink }}
              protocol: TCP
            {{- end }}
            {{- if $telemetry }}
            - name: grpc
              containerPort: {{ $root.Values.ports.grpc }}
              protocol: TCP
            {{- end }}
          {{- $p := $root.Values.probes }}
          {{- if $http }}
          # /healthz: the process is up; /readyz: Redis, MongoDB and the object store answer.
          startupProbe:
            httpGet:
              path: {{ $p.startup.path }}
              port: http
            periodSeconds: {{ $p.startup.periodSeconds }}
            failureThreshold: {{ $p.startup.failureThreshold }}
          readinessProbe:
            httpGet:
              path: {{ $p.readiness.path }}
              port: http
            periodSeconds: {{ $p.readiness.periodSeconds }}
            timeoutSeconds: {{ $p.readiness.timeoutSeconds }}
            failureThreshold: {{ $p.readiness.failureThreshold }}
          livenessProbe:
            httpGet:
              path: {{ $p.liveness.path }}
              port: http
            periodSeconds: {{ $p.liveness.periodSeconds }}
            timeoutSeconds: {{ $p.liveness.timeoutSeconds }}
            failureThreshold: {{ $p.liveness.failureThreshold }}
          {{- else }}
          # No HTTP port on this node: the metrics listener opens once the roles started (and the
          # ingest's port with telemetry).
          startupProbe:
            tcpSocket:
              port: metrics
            periodSeconds: {{ $p.startup.periodSeconds }}
            failureThreshold: {{ $p.startup.failureThreshold }}
          readinessProbe:
            tcpSocket:
              port: {{ ternary "grpc" "metrics" $telemetry }}
            periodSeconds: {{ $p.readiness.periodSeconds }}
            timeoutSeconds: {{ $p.readiness.timeoutSeconds }}
            failureThreshold: {{ $p.readiness.failureThreshold }}
          livenessProbe:
            tcpSocket:
              port: metrics
            periodSeconds: {{ $p.liveness.periodSeconds }}
            timeoutSeconds: {{ $p.liveness.timeoutSeconds }}
            failureThreshold: {{ $p.liveness.failureThreshold }}
          {{- end }}
          lifecycle:
            # Keeps serving while endpoints and proxies drop the pod; then SIGTERM: the node stops
            # accepting, closes hub connections (clients reconnect elsewhere), hands its actors off.
            preStop:
              exec:
                command: ["sleep", "{{ $node.preStopSleepSeconds }}"]
          resources:
            {{- toYaml $node.resources | nindent 12 }}
          volumeMounts:
            - name: tmp
              mountPath: /tmp
            - name: data
              mountPath: /data
            {{- if and $telemetry $tls.secretName }}
            - name: telemetry-tls
              mountPath: /etc/consult/telemetry-tls
              readOnly: true
            {{- end }}
      volumes:
        - name: tmp
          emptyDir: {}
        - name: data
          {{- if $root.Values.storage.existingClaim }}
          persistentVolumeClaim:
            claimName: {{ $root.Values.storage.existingClaim }}
          {{- else }}
          emptyDir: {}
          {{- end }}
        {{- if and $telemetry $tls.secretName }}
        - name: telemetry-tls
          secret:
            secretName: {{ $tls.secretName }}
        {{- end }}
      {{- with $node.nodeSelector }}
      nodeSelector:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $node.tolerations }}
      tolerations:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      {{- with $node.affinity }}
      affinity:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      topologySpreadConstraints:
        {{- if $node.topologySpreadConstraints }}
        {{- toYaml $node.topologySpreadConstraints | nindent 8 }}
        {{- else }}
        - maxSkew: 1
          topologyKey: kubernetes.io/hostname
          whenUnsatisfiable: ScheduleAnyway
          labelSelector:
            matchLabels:
              {{- include "consult.selectorLabels" $root | nindent 14 }}
              app.kubernetes.io/component: {{ $component }}
        {{- end }}
{{- end -}}

{{/* The HorizontalPodAutoscaler of one kind of node. */}}
{{- define "consult.nodeHpa" -}}
{{- $root := .root -}}
{{- $node := .node -}}
{{- $component := .component -}}
{{- $a := $node.autoscaling -}}
{{- if not (or $a.targetCPUUtilizationPercentage $a.connections.enabled $a.extraMetrics) -}}
{{- fail (printf "%sNodes.autoscaling is enabled with no metric" $component) -}}
{{- end -}}
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata:
  name: {{ include "consult.fullname" $root }}-{{ $component }}
  labels:
    {{- include "consult.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
spec:
  scaleTargetRef:
    apiVersion: apps/v1
    kind: Deployment
    name: {{ include "consult.fullname" $root }}-{{ $component }}
  minReplicas: {{ $a.minReplicas }}
  maxReplicas: {{ $a.maxReplicas }}
  metrics:
    {{- if $a.targetCPUUtilizationPercentage }}
    - type: Resource
      resource:
        name: cpu
        target:
          type: Utilization
          averageUtilization: {{ $a.targetCPUUtilizationPercentage }}
    {{- end }}
    {{- if $a.connections.enabled }}
    # Hub connections per pod, from the custom metrics API (README.md: the adapter rule).
    - type: Pods
      pods:
        metric:
          name: {{ $a.connections.metricName }}
        target:
          type: AverageValue
          averageValue: {{ $a.connections.targetAverageValue | quote }}
    {{- end }}
    {{- with $a.extraMetrics }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
  {{- with $a.behavior }}
  behavior:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}

{{/* The PodDisruptionBudget of one kind of node. */}}
{{- define "consult.nodePdb" -}}
{{- $root := .root -}}
{{- $node := .node -}}
{{- $component := .component -}}
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata:
  name: {{ include "consult.fullname" $root }}-{{ $component }}
  labels:
    {{- include "consult.labels" $root | nindent 4 }}
    app.kubernetes.io/component: {{ $component }}
spec:
  {{- if not (kindIs "invalid" $node.pdb.minAvailable) }}
  minAvailable: {{ $node.pdb.minAvailable }}
  {{- else }}
  maxUnavailable: {{ $node.pdb.maxUnavailable }}
  {{- end }}
  selector:
    matchLabels:
      {{- include "consult.selectorLabels" $root | nindent 6 }}
      app.kubernetes.io/component: {{ $component }}
{{- end -}}
