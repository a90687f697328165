import assert from 'node:assert/strict'
import { answer, uuidsOf } from './client.js'
import { ownedProject, type Journey } from './world.js'

export const invitationJourneys: Journey[] = [
  {
    name: 'an organization owner invites to a role; a user submits a permission request through the invitation, the owner approves it and the user joins; the invitation is then withdrawn',
    async run(w) {
      const { organization, project, owner } = await ownedProject(w, { fullName: 'Olga Owner' })
      const roles = await w.http<{ uuid: string; name: string }[]>(
        'GET',
        '/api/roles/?name=CUSTOMER.SUPPORT',
        owner,
      )
      const role = roles.body.find((r) => r.name === 'CUSTOMER.SUPPORT')!
      const inviter = w.api(owner)

      const invitation = await answer(
        201,
        // Addressed to the organization's e-mail domain: whoever it is addressed to may read it.
        inviter.POST('/api/user-group-invitations/', {
          body: { role: role.uuid, scope: organization.url, user_email_patterns: ['.*@example\\.com'] },
        }),
      )
      assert.equal(invitation.scope_uuid, organization.uuid)
      assert.equal(invitation.scope_type, 'customer')
      assert.equal(invitation.role_name, 'CUSTOMER.SUPPORT')
      assert.equal(invitation.created_by_full_name, 'Olga Owner')
      assert.equal(invitation.is_active, true)
      const path = { params: { path: { uuid: invitation.uuid } } }
      assert.deepEqual(
        await uuidsOf(
          inviter.GET('/api/user-group-invitations/', {
            params: { query: { customer_uuid: organization.uuid, is_active: true } },
          }),
        ),
        [invitation.uuid],
      )
      const projects = await answer(200, inviter.GET('/api/user-group-invitations/{uuid}/projects/', path))
      assert.deepEqual(
        projects.map((p) => p.uuid),
        [project.uuid],
      )

      const newcomer = await w.user()
      assert.equal((await w.http('GET', `/api/customers/${organization.uuid}/`, newcomer)).status, 404)
      const seen = await answer(200, w.api(newcomer).GET('/api/user-group-invitations/{uuid}/', path))
      assert.equal(seen.scope_name, organization.name)
      const submitted = await answer(
        200,
        w.api(newcomer).POST('/api/user-group-invitations/{uuid}/submit_request/', path),
      )
      assert.equal(submitted.auto_approved, false)
      assert.equal(submitted.scope_uuid, organization.uuid)

      // Permission requests are reviewed outside the contract areas.
      const approved = await w.http(
        'POST',
        `/api/user-permission-requests/${submitted.uuid}/approve/`,
        owner,
        { comment: 'welcome aboard' },
      )
      assert.equal(approved.status, 200)
      assert.equal((await w.http('GET', `/api/customers/${organization.uuid}/`, newcomer)).status, 200)

      await answer(200, inviter.POST('/api/user-group-invitations/{uuid}/cancel/', path))
      const cancelled = await answer(200, inviter.GET('/api/user-group-invitations/{uuid}/', path))
      assert.equal(cancelled.is_active, false)
      await answer(204, inviter.DELETE('/api/user-group-invitations/{uuid}/', path))
      await answer(404, inviter.GET('/api/user-group-invitations/{uuid}/', path))
    },
  },
]
